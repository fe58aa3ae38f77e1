# Writes the variants B-F of this experiment (README.md) from the kernels A_<stencil>_<dtype>.cu
# (the generator's, `splits` as it was) and E_<stencil>_f64.cu (the generator's with `splits`
# returning true: f64 with a copy without checks): `#pragma unroll` before the loop over the rows.
import glob,re
def unrolled(src,out,count):
    s=open(src).read()
    s2,n=re.subn(r'(\n(\s*)for \(I p = )',lambda m:'\n'+m.group(2)+'#pragma unroll '+count+m.group(1),s)
    assert n==1,src
    open(out,'w').write(s2)
def rows(src):
    return int(re.search(r'win\[\d+\]\[(\d+)\]',open(src).read()).group(1))
for a in glob.glob('A_*.cu'):
    r=rows(a)
    unrolled(a,a.replace('A_','B_',1),str(r))
    if 'bool EDGE' in open(a).read():
        unrolled(a,a.replace('A_','C_',1),'(EDGE ? 1 : %d)'%r)
for e in glob.glob('E_*.cu'):
    r=rows(e)
    unrolled(e,e.replace('E_','D_',1),str(r))
    unrolled(e,e.replace('E_','F_',1),'(EDGE ? 1 : %d)'%r)
