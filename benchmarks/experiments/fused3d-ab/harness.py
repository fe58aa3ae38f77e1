# Writes build/: the kernels <V>_<stencil>_<dtype>.cu of this directory (V a variant's letter) with
# their symbols prefixed, and main.cu, which times each (N^3 or N0 x N1 x N2 cells, 20
# launches of time_block steps, median of 5) and compares its grid after 12
# steps with the first variant's of the same stencil, bit for bit (printing
# the largest difference where they differ). A kernel without a `levels`
# argument (no fused loop `for (int s = T; s >= 1`) is a single-step one.
# Every launcher gets the stream 0 last (the generated ones take it since
# sessions could capture graphs; older kernels ignore it).
# See README.md.
import re,glob,os
out='build'
os.makedirs(out,exist_ok=True)
entries=[]
for f in sorted(glob.glob('[A-Z]_*.cu')):
    v,name,d=re.match(r'([A-Z])_(\w+?)_(f32|f64)\.cu',f).groups()
    s=open(f).read()
    s=s.replace('stencils_cuda__',f'{v}_{d}_stencils_cuda__')
    m=re.search(r'for \(int s = (\d+); s >= 1',s) or re.search(r'(\d+) steps fused',s)
    t=int(m.group(1)) if m else 0  # 0: a single-step kernel, no `levels` argument
    # A fused kernel's file that ends in `/* harness: levels L */` is launched with L levels
    # (1: the launcher's single step, which a session runs where the fused launch is slower).
    one=re.search(r'/\* harness: levels (\d+) \*/',s)
    one=bool(m and one and int(one.group(1))==1)
    if one: t=1
    open(f'{out}/{f}','w').write(s)
    # The launcher: not `<launcher>_fuses`, which the session asks first (the harness runs
    # fused kernels on the grids they take only).
    fn=re.search(r'extern "C" int (\w+?)(?<!_fuses)\(',s).group(1)
    wave='wave' in name or 'acoustic' in name  # leapfrogs: u, u.prev and an input grid
    sig=re.search(r'extern "C" int \w+?(?<!_fuses)\(([^)]*)\)',s).group(1)
    inputs=0 if wave else sig.count('const ')-1  # other stencils: the stepped grid and 0 to 2 input grids at b[4], b[5]
    assert inputs<=2, f
    entries.append((v,name,d,t,fn,wave,inputs,one))
decl=[];tab=[]
for v,name,d,t,fn,wave,inputs,one in entries:
    T='float' if d=='f32' else 'double'
    if inputs:
        decl.append(f'extern "C" int {fn}(ptrdiff_t,ptrdiff_t,ptrdiff_t,{T}*,const {T}*{f",const {T}*"*inputs}{",int" if t else ""});')
    elif wave and t:
        decl.append(f'extern "C" int {fn}(ptrdiff_t,ptrdiff_t,ptrdiff_t,{T}*,{T}*,const {T}*,const {T}*,const {T}*,int);')
    elif wave:
        decl.append(f'extern "C" int {fn}(ptrdiff_t,ptrdiff_t,ptrdiff_t,{T}*,const {T}*,const {T}*,const {T}*);')
    else:
        decl.append(f'extern "C" int {fn}(ptrdiff_t,ptrdiff_t,ptrdiff_t,{T}*,const {T}*{",int" if t else ""});')
    tab.append(f'  {{"{v}","{name}","{d}",{t},{int(wave)},{inputs},(void*){fn},{int(one)}}},')
main=r'''
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <vector>
#include <string>
#include <cstdlib>
#include <cmath>
DECL
struct E{const char*v;const char*n;const char*d;int t;int wave;int inputs;void*f;int one;};
static E tab[]={
TAB
};
template<class T> __global__ void fill(T*a,size_t n,unsigned seed,T scale){size_t i=blockIdx.x*(size_t)blockDim.x+threadIdx.x; if(i<n){unsigned h=(unsigned)i*2654435761u^seed; h^=h>>13; h*=0x5bd1e995u; h^=h>>15; a[i]=scale*(T)(h&0xffffff)/(T)0x1000000;}}
#define CK(x) do{cudaError_t e=(x); if(e!=cudaSuccess){printf("CUDA %s at %d\n",cudaGetErrorString(e),__LINE__); exit(1);}}while(0)
template<class T> double run(E&e,int N0,int N1,int N2,int calls,std::vector<unsigned char>*result){
  size_t n=(size_t)N0*N1*N2; T* b[6]; for(int i=0;i<6;i++){CK(cudaMalloc(&b[i],n*sizeof(T)));}
  fill<T><<<(n+255)/256,256>>>(b[0],n,1,(T)1); fill<T><<<(n+255)/256,256>>>(b[1],n,1,(T)1);
  // u.prev starts equal to u (seed 1 in every u buffer), so that every buffer has the same fixed halo
  // and single-step and fused leapfrogs, which rotate their buffers differently, compare
  fill<T><<<(n+255)/256,256>>>(b[2],n,1,(T)1); fill<T><<<(n+255)/256,256>>>(b[3],n,1,(T)1);
  fill<T><<<(n+255)/256,256>>>(b[4],n,9,(T)0.1); fill<T><<<(n+255)/256,256>>>(b[5],n,5,(T)1); CK(cudaDeviceSynchronize());
  // plain: cur=b[0], out=b[1]. wave: prev=b[2] cur=b[0] -> out=b[1], out_prev=b[3]
  int cur=0,out=1,prev=2,outp=3; cudaEvent_t s,f; cudaEventCreate(&s); cudaEventCreate(&f);
  // a single-step leapfrog writes u(t+1) to out from prev = u(t-1) and cur = u(t); then prev <- cur <- out <- prev
  auto step=[&](){ int rc; if(e.inputs==1&&e.t) rc=((int(*)(ptrdiff_t,ptrdiff_t,ptrdiff_t,T*,const T*,const T*,int,cudaStream_t))e.f)(N0,N1,N2,b[out],b[cur],b[4],e.t,(cudaStream_t)0);
     else if(e.inputs==1) rc=((int(*)(ptrdiff_t,ptrdiff_t,ptrdiff_t,T*,const T*,const T*,cudaStream_t))e.f)(N0,N1,N2,b[out],b[cur],b[4],(cudaStream_t)0);
     else if(e.inputs==2&&e.t) rc=((int(*)(ptrdiff_t,ptrdiff_t,ptrdiff_t,T*,const T*,const T*,const T*,int,cudaStream_t))e.f)(N0,N1,N2,b[out],b[cur],b[4],b[5],e.t,(cudaStream_t)0);
     else if(e.inputs==2) rc=((int(*)(ptrdiff_t,ptrdiff_t,ptrdiff_t,T*,const T*,const T*,const T*,cudaStream_t))e.f)(N0,N1,N2,b[out],b[cur],b[4],b[5],(cudaStream_t)0);
     else if(e.wave&&e.t) rc=((int(*)(ptrdiff_t,ptrdiff_t,ptrdiff_t,T*,T*,const T*,const T*,const T*,int,cudaStream_t))e.f)(N0,N1,N2,b[out],b[outp],b[prev],b[cur],b[4],e.t,(cudaStream_t)0);
     else if(e.wave) rc=((int(*)(ptrdiff_t,ptrdiff_t,ptrdiff_t,T*,const T*,const T*,const T*,cudaStream_t))e.f)(N0,N1,N2,b[out],b[prev],b[cur],b[4],(cudaStream_t)0);
     else if(e.t) rc=((int(*)(ptrdiff_t,ptrdiff_t,ptrdiff_t,T*,const T*,int,cudaStream_t))e.f)(N0,N1,N2,b[out],b[cur],e.t,(cudaStream_t)0);
     else rc=((int(*)(ptrdiff_t,ptrdiff_t,ptrdiff_t,T*,const T*,cudaStream_t))e.f)(N0,N1,N2,b[out],b[cur],(cudaStream_t)0);
     if(rc){printf("launch error %d\n",rc);exit(1);}
     // a fused leapfrog's launch of one level writes u(t+1) to out_prev's buffer (the generated Rust's Levels::advance_one)
     if(e.wave&&e.one){ int o=prev; prev=cur; cur=outp; outp=o; }
     else if(e.wave&&!e.t){ int o=prev; prev=cur; cur=out; out=o; } else { std::swap(cur,out); if(e.wave) std::swap(prev,outp); } };
  if(result){ for(int i=0;i<12/std::max(e.t,1);i++) step(); CK(cudaDeviceSynchronize()); result->resize(n*sizeof(T)); CK(cudaMemcpy(result->data(),b[cur],n*sizeof(T),cudaMemcpyDeviceToHost)); }
  for(int i=0;i<3;i++) step();
  std::vector<float> ts; for(int r=0;r<5;r++){ cudaEventRecord(s); for(int i=0;i<calls;i++) step(); cudaEventRecord(f); CK(cudaEventSynchronize(f)); float ms; cudaEventElapsedTime(&ms,s,f); ts.push_back(ms);} 
  std::sort(ts.begin(),ts.end()); for(int i=0;i<6;i++) cudaFree(b[i]);
  double cells=(double)(N0-2)*(N1-2)*(N2-2)*std::max(e.t,1)*calls; return cells/(ts[2]*1e-3)/1e9;
}
int main(int argc,char**argv){ // ab [STENCIL [N | N0 N1 N2]]: an empty STENCIL runs every one
  int N0=argc>2?atoi(argv[2]):512, N1=argc>4?atoi(argv[3]):N0, N2=argc>4?atoi(argv[4]):N0; std::string only=argc>1?argv[1]:"";
  { // the bandwidth bound, in this run: a device-to-device copy of 1 GiB, bytes read + written
    size_t n=1<<30; void*a; void*b; CK(cudaMalloc(&a,n)); CK(cudaMalloc(&b,n)); cudaEvent_t s,f; cudaEventCreate(&s); cudaEventCreate(&f);
    CK(cudaMemcpy(b,a,n,cudaMemcpyDeviceToDevice)); std::vector<float> ts;
    for(int r=0;r<5;r++){ cudaEventRecord(s); for(int i=0;i<10;i++) cudaMemcpy(b,a,n,cudaMemcpyDeviceToDevice); cudaEventRecord(f); CK(cudaEventSynchronize(f)); float ms; cudaEventElapsedTime(&ms,s,f); ts.push_back(ms);}
    std::sort(ts.begin(),ts.end()); double gbs=2.0*n*10/(ts[2]*1e-3)/1e9; cudaFree(a); cudaFree(b);
    printf("bandwidth %.0f GB/s: single-step bound %.1f GCells/s in f32, %.1f in f64\n",gbs,gbs/8,gbs/16); }
  int m=sizeof(tab)/sizeof(tab[0]); std::vector<std::vector<unsigned char>> res(m);
  for(int i=0;i<m;i++){ E&e=tab[i]; if(!only.empty()&&only!=e.n) continue; bool f32=!strcmp(e.d,"f32");
    double g = f32? run<float>(e,N0,N1,N2,20,&res[i]) : run<double>(e,N0,N1,N2,20,&res[i]);
    int ref=-1; for(int k=0;k<i;k++) if(!strcmp(tab[k].n,e.n)&&!strcmp(tab[k].d,e.d)&&!res[k].empty()){ref=k;break;}
    const char* same = ref<0? "ref" : (res[ref]==res[i]? "bit-identical":"DIFFERS");
    if(ref>=0 && res[ref]!=res[i]){ size_t sz=f32?4:8; size_t cnt=0,first=(size_t)-1; double worst=0; for(size_t k=0;k<res[i].size()/sz;k++) if(memcmp(&res[i][k*sz],&res[ref][k*sz],sz)){cnt++; if(first==(size_t)-1)first=k; double x=f32?((float*)res[ref].data())[k]:((double*)res[ref].data())[k], y=f32?((float*)res[i].data())[k]:((double*)res[i].data())[k]; worst=std::max(worst,std::fabs(x-y)); if(!(x==x)||!(y==y)) worst=INFINITY;}
      double a,b; if(f32){a=((float*)res[ref].data())[first]; b=((float*)res[i].data())[first];} else {a=((double*)res[ref].data())[first]; b=((double*)res[i].data())[first];}
      printf("   %zu cells differ, by at most %.3g; first z=%zu y=%zu x=%zu: %.9g vs %.9g\n",cnt,worst,first/((size_t)N1*N2),first/N2%N1,first%N2,a,b);}
    printf("%s %-8s %s t%d %8.1f GCells/s %s\n",e.v,e.n,e.d,e.t,g,same); fflush(stdout); }
}
'''
main=main.replace('DECL','\n'.join(decl)).replace('TAB','\n'.join(tab))
open(f'{out}/main.cu','w').write(main)
print(len(entries))
