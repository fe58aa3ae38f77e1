import re,sys
sys.argv=['x']
exec(open('mk.py').read().split("variants={")[0])
def unrolln(k,n):
    k2=re.sub(r'(\n\s*)(for \(int p = )',rf'\1#pragma unroll {n}\1\2',k,count=1); assert k2!=k; return k2
def lb(k,n):
    return re.sub(r'__launch_bounds__\((\d+)\)',rf'__launch_bounds__(\1, {n})',k)
out=['#include <cuda_runtime.h>','#include <stddef.h>','#include "drv.h"']
tab=[]
for tag,w in [('j3d13pt_f32',5),('j3d13pt_f64',5),('star3d25_f32',9),('star3d25_f64',9)]:
    k,blk,grid,sh=kernel_and_launch(f'r_{tag}.cu')
    ty='double' if 'f64' in tag else 'float'
    V={'base':lambda k:k,'unroll':lambda k:unrolln(sel(k),w)}
    if 'f32' in tag: V['unroll_lb']=lambda k:lb(unrolln(sel(k),w),3)
    for v,f in V.items():
        name=f'{tag}_{v}'
        out.append(re.sub(r'stencils_cuda__k__update_u_kernel',f'kern_{name}',f(k)))
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
open('kernels6.cu','w').write('\n'.join(out)+'\n')
