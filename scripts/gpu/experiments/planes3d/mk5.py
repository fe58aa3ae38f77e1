import re,sys
sys.argv=['x']
exec(open('mk.py').read().split("variants={")[0])
def opaque(k):
    # thread coordinates from inline asm: opaque to the optimizer, used for the rings' addresses
    a=k.index('extern __shared__')
    head,tail=k[:a],k[a:]
    tail=tail.replace('threadIdx.x','tx').replace('threadIdx.y','ty')
    decl='unsigned tx, ty;\n    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tx));\n    asm volatile("mov.u32 %0, %%tid.y;" : "=r"(ty));\n    '
    return head+decl+tail
def lb(k,n):
    return re.sub(r'__launch_bounds__\((\d+)\)',rf'__launch_bounds__(\1, {n})',k)
V={'opq_lb2':lambda k:lb(opaque(unroll(sel(k))),2),'opq_lb3':lambda k:lb(opaque(unroll(sel(k))),3),'opq_only':opaque,'base':lambda k:k,'opq':opaque,'unroll':lambda k:unroll(sel(k)),'unroll_opq':lambda k:opaque(unroll(sel(k)))}
out=['#include <cuda_runtime.h>','#include <stddef.h>','#include "drv.h"']
tab=[]
for tag,vs in [('f32_1_8_64',['base','opq_only','unroll_opq','opq_lb2']),('f32_1_8_32',['base','opq_only','unroll_opq','opq_lb3'])]:
    k,blk,grid,sh=kernel_and_launch(f'j_{tag}.cu')
    ty='double' if 'f64' in tag else 'float'
    for v in vs:
        name=f'{tag}_{v}'
        out.append(re.sub(r'stencils_cuda__k__update_u_kernel',f'kern_{name}',V[v](k)))
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
open('kernels5.cu','w').write('\n'.join(out)+'\n')
