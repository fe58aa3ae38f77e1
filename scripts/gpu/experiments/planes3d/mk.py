import re,sys
def kernel_and_launch(path):
    src=open(path).read()
    a=src.index('static __global__'); b=src.index('/* The same with 64-bit')
    k=src[a:b]
    blk=re.search(r'const dim3 block\((\d+), (\d+)\);',src).groups()
    grid=re.search(r'const dim3 grid\((.*)\);',src).group(1)
    sh=int(re.search(r'<<<grid, block, (\d+)>>>',src).group(1))
    return k,blk,grid,sh
def sel(k):
    k2=re.sub(r'(\w+) v = (win\[s - 1\]\[\d\]\[j\]);\n(\s*)if \((.*)\) \{\n\s*v = (.*);\n\s*\}\n\s*next\[j\] = v;',
              lambda m: f'const {m.group(1)} u = {m.group(5)};\n{m.group(3)}next[j] = {m.group(4)} ? u : {m.group(2)};',k)
    assert k2!=k
    return k2
def unroll(k):
    k2=re.sub(r'(\n\s*)(for \(int p = )',r'\1#pragma unroll 3\1\2',k,count=1); assert k2!=k; return k2
def nomask(k):
    k2=k.replace('step && in_y[j] && in_x','step'); assert k2!=k; return k2
variants={'base':lambda k:k,'sel':sel,'unroll':lambda k:unroll(sel(k)),'nomask':lambda k:nomask(sel(k)),'nomask_unroll':lambda k:unroll(nomask(sel(k)))}
out=['#include <cuda_runtime.h>','#include <stddef.h>','#include "drv.h"']
tab=[]
for path in sys.argv[1:]:
    tag=path.split('/')[-1][2:-3]
    k,blk,grid,sh=kernel_and_launch(path)
    ty='double' if 'f64' in tag else 'float'
    for v,f in variants.items():
        name=f'{tag}_{v}'
        kk=f(k)
        kk=re.sub(r'stencils_cuda__k__update_u_kernel',f'kern_{name}',kk)
        out.append(kk)
        out.append(f'''static int launch_{name}(int n0,int n1,int n2,{ty}*out,const {ty}*in,int levels){{
  cudaFuncSetAttribute((const void*)kern_{name}, cudaFuncAttributeMaxDynamicSharedMemorySize, {sh});
  const dim3 block({blk[0]},{blk[1]}); const dim3 grid({grid});
  kern_{name}<<<grid,block,{sh}>>>(n0,n1,n2,out,in,levels); return (int)cudaGetLastError(); }}''')
        tab.append((name,ty))
out.append('static Variant variants[] = {')
for name,ty in tab:
    out.append(f'  {{"{name}", {8 if ty=="double" else 4}, (void*)launch_{name}}},')
out.append('};')
out.append('#include "drv_main.h"')
open('kernels.cu','w').write('\n'.join(out)+'\n')
