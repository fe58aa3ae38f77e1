# Writes build/: the kernels <V>_<stencil>_<dtype>.cu of this directory (V a variant's letter, the
# 2-D `temporal` kernels `auto` generates, or `persistent` ones) with their symbols prefixed, and
# main.cu, which runs each on N x N cells (seeded data): compares its grid after 60 steps with the
# first variant's of the same stencil and dtype, bit for bit (else the largest difference), then
# times 20 time blocks (median of 5, CUDA events): 20 launches of time_block steps, or one
# cooperative launch of 20 sweeps for `persistent`; prints GCells/s over the interior. See README.md.
import re,glob,os
os.makedirs('build',exist_ok=True)
entries=[]
for f in sorted(glob.glob('[A-Z]_*.cu')):
    v,name,d=re.match(r'([A-Z])_(\w+?)_(f32|f64)\.cu$',f).groups()
    s=open(f).read().replace('stencils_cuda__',f'{v}_{d}_stencils_cuda__')
    t=int(re.search(r'win\[(\d+)\]',s).group(1))
    r=int(re.search(r'radius \((\d+), (\d+)\)',s).group(1))
    open(f'build/{f}','w').write(s)
    fn=re.search(r'extern "C" int (\w+?)(?<!_fuses)\(',s).group(1)
    sig=re.search(r'extern "C" int \w+?(?<!_fuses)\(([^)]*)\)',s).group(1)
    wave='out_prev' in sig
    pers='unsigned long long steps' in sig  # `persistent`: all the steps in one cooperative launch
    entries.append((v,name,d,t,r,fn,wave,pers))
decl=[];tab=[]
for v,name,d,t,r,fn,wave,pers in entries:
    T='float' if d=='f32' else 'double'
    if pers and wave: decl.append(f'extern "C" int {fn}(ptrdiff_t,ptrdiff_t,{T}*,{T}*,{T}*,{T}*,unsigned long long);')
    elif pers: decl.append(f'extern "C" int {fn}(ptrdiff_t,ptrdiff_t,{T}*,{T}*,unsigned long long);')
    elif wave: decl.append(f'extern "C" int {fn}(ptrdiff_t,ptrdiff_t,{T}*,{T}*,const {T}*,const {T}*,int);')
    else: decl.append(f'extern "C" int {fn}(ptrdiff_t,ptrdiff_t,{T}*,const {T}*,int);')
    tab.append(f'  {{"{v}","{name}","{d}",{t},{r},{int(wave)},{int(pers)},(void*){fn}}},')
main=r'''
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <algorithm>
#include <vector>
#include <string>
#include <cmath>
DECL
struct E{const char*v;const char*n;const char*d;int t;int r;int wave;int pers;void*f;};
static E tab[]={
TAB
};
template<class T> __global__ void fill(T*a,size_t n,unsigned seed){size_t i=blockIdx.x*(size_t)blockDim.x+threadIdx.x; if(i<n){unsigned h=(unsigned)i*2654435761u^seed; h^=h>>13; h*=0x5bd1e995u; h^=h>>15; a[i]=(T)(h&0xffffff)/(T)0x1000000;}}
#define CK(x) do{cudaError_t e=(x); if(e!=cudaSuccess){printf("CUDA %s at %d\n",cudaGetErrorString(e),__LINE__); exit(1);}}while(0)
template<class T> double run(E&e,long N,int calls,std::vector<T>*result){
  size_t n=(size_t)N*N; T*b[4]; for(int i=0;i<4;i++){CK(cudaMalloc(&b[i],n*sizeof(T))); fill<T><<<(n+255)/256,256>>>(b[i],n,1);} CK(cudaDeviceSynchronize());
  int cur=0,out=1,prev=2,outp=3; cudaEvent_t s,f; cudaEventCreate(&s); cudaEventCreate(&f);
  // One launch of `steps` (at most time_block, but for `persistent`): the result is in `out` (a
  // leapfrog's level before it in `out_prev`), for `persistent` after an odd number of sweeps only.
  auto launch=[&](long long steps){ int rc;
    if(e.pers&&e.wave) rc=((int(*)(ptrdiff_t,ptrdiff_t,T*,T*,T*,T*,unsigned long long))e.f)(N,N,b[out],b[outp],b[prev],b[cur],steps);
    else if(e.pers) rc=((int(*)(ptrdiff_t,ptrdiff_t,T*,T*,unsigned long long))e.f)(N,N,b[out],b[cur],steps);
    else if(e.wave) rc=((int(*)(ptrdiff_t,ptrdiff_t,T*,T*,const T*,const T*,int))e.f)(N,N,b[out],b[outp],b[prev],b[cur],(int)steps);
    else rc=((int(*)(ptrdiff_t,ptrdiff_t,T*,const T*,int))e.f)(N,N,b[out],b[cur],(int)steps);
    if(rc){printf("launch error %d\n",rc);exit(1);}
    if(!e.pers||((steps+e.t-1)/e.t)%2){ std::swap(cur,out); if(e.wave) std::swap(prev,outp); } };
  // `steps` steps: one cooperative launch, or launches of time_block steps and the rest.
  auto run_steps=[&](long long steps){ if(e.pers) launch(steps); else for(long long l=steps;l>0;l-=e.t) launch(std::min<long long>(l,e.t)); };
  if(result){ run_steps(60); CK(cudaDeviceSynchronize()); result->resize(n); CK(cudaMemcpy(result->data(),b[cur],n*sizeof(T),cudaMemcpyDeviceToHost)); }
  run_steps((e.pers?2:3)*(long long)e.t);
  std::vector<float> ts; for(int k=0;k<5;k++){ cudaEventRecord(s); run_steps((long long)calls*e.t); cudaEventRecord(f); CK(cudaEventSynchronize(f)); float ms; cudaEventElapsedTime(&ms,s,f); ts.push_back(ms);}
  std::sort(ts.begin(),ts.end()); for(int i=0;i<4;i++) cudaFree(b[i]);
  double cells=(double)(N-2*e.r)*(N-2*e.r)*e.t*calls; return cells/(ts[2]*1e-3)/1e9;
}
template<class T> void one(E&e,long N,std::vector<T>&first,const char*&firstv,double&base){
  std::vector<T> res; double g=run<T>(e,N,20,&res);
  std::string cmp="";
  if(first.empty()){first=res; firstv=e.v; base=g; cmp="(reference)";}
  else { double md=0; size_t nd=0; for(size_t i=0;i<res.size();i++){ double dd=std::fabs((double)res[i]-(double)first[i]); if(dd>0){nd++; md=std::max(md,dd);} }
    char buf[128]; if(nd==0) snprintf(buf,128,"bit-identical to %s",firstv); else snprintf(buf,128,"%zu cells differ from %s, max %.3g",nd,firstv,md); cmp=buf; }
  printf("%s %-11s %s N=%-6ld t=%-2d %8.1f GCells/s  %.3fx  %s\n",e.v,e.n,e.d,N,e.t,g,g/base,cmp.c_str()); fflush(stdout);
}
int main(int argc,char**argv){
  const char*only=argc>2?argv[2]:nullptr;
  long N=argc>1?atol(argv[1]):16384;
  size_t ne=sizeof(tab)/sizeof(tab[0]);
  for(size_t i=0;i<ne;i++){ bool seen=false; for(size_t j=0;j<i;j++) if(!strcmp(tab[j].n,tab[i].n)&&!strcmp(tab[j].d,tab[i].d)) seen=true; if(seen) continue;
    if(only&&strcmp(only,tab[i].n)) continue;
    std::vector<float> f32; std::vector<double> f64; const char*fv=nullptr; double base=0;
    for(size_t j=i;j<ne;j++){ if(strcmp(tab[j].n,tab[i].n)||strcmp(tab[j].d,tab[i].d)) continue;
      if(!strcmp(tab[j].d,"f32")) one<float>(tab[j],N,f32,fv,base); else one<double>(tab[j],N,f64,fv,base); }
  }
}
'''
open('build/main.cu','w').write(main.replace('DECL','\n'.join(decl)).replace('TAB','\n'.join(tab)))
