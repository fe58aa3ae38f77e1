import re,sys
sys.argv=['x']
exec(open('mk.py').read().split("variants={")[0])
variants={'base':lambda k:k,'unroll':lambda k:unroll(sel(k))}
out=['#include <cuda_runtime.h>','#include <stddef.h>','#include "drv.h"']
tab=[]
def add(name, code, kern, blk, grid, sh, ty):
    out.append(code)
    out.append(f'''static int launch_{name}(int n0,int n1,int n2,{ty}*out,const {ty}*in,int levels){{
  cudaFuncSetAttribute((const void*){kern}, cudaFuncAttributeMaxDynamicSharedMemorySize, {sh});
  const dim3 block({blk[0]},{blk[1]}); const dim3 grid({grid});
  {kern}<<<grid,block,{sh}>>>(n0,n1,n2,out,in,levels); return (int)cudaGetLastError(); }}''')
    tab.append((name,ty))
for tag in ['f32_1_8_64','f32_1_8_32','f64_1_8_64']:
    path=f'j_{tag}.cu'
    k,blk,grid,sh=kernel_and_launch(path)
    ty='double' if 'f64' in tag else 'float'
    for v,f in variants.items():
        name=f'{tag}_{v}'
        add(name, re.sub(r'stencils_cuda__k__update_u_kernel',f'kern_{name}',f(k)), f'kern_{name}', blk, grid, sh, ty)
    src=open(f'new_j_{tag}.cu').read()
    a=src.index('/* Plane p of'); b=src.index('/* The same with 64-bit')
    code=src[a:b]
    for v,lb in [('new',None),('new_lb2',2)]:
        name=f'{tag}_{v}'
        c=code.replace('stencils_cuda__k__update_u',f'n_{name}')
        if lb: c=re.sub(r'__launch_bounds__\((\d+)\)',rf'__launch_bounds__(\1, {lb})',c)
        add(name,c,f'n_{name}_kernel',blk,grid,sh,ty)
out.append('static Variant variants[] = {')
for name,ty in tab:
    out.append(f'  {{"{name}", {8 if ty=="double" else 4}, (void*)launch_{name}}},')
out.append('};')
out.append('#include "drv_main.h"')
open('kernels2.cu','w').write('\n'.join(out)+'\n')
