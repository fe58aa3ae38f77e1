# Rewrites a CUDA source for the emulated device, as stencil-build's
# `toolchain::host_launches` does (launches as `cuda_on_cpu::launch`, the
# dynamic shared memory as `using ::shared`), renaming its launcher:
#   launches.py SOURCE OUTPUT NEW_NAME LAUNCHER
import sys,re
def host_launches(text):
    text=text.replace("extern __shared__ __align__(16) unsigned char shared[];","using ::shared;")
    out=[];rest=text
    while True:
        o=rest.find("<<<")
        if o<0: break
        c=rest.find(">>>(",o)
        before=rest[:o]
        m=re.search(r'[A-Za-z0-9_]*$',before)
        name_at=m.start()
        config=rest[o+3:c]
        n=len(config.split(','))
        shared={2:", 0, nullptr",3:", nullptr"}.get(n,"")
        out.append(before[:name_at]); out.append(f"cuda_on_cpu::launch({before[name_at:]}, {config}{shared}")
        rest=rest[c+4:]
        if not rest.startswith(')'): out.append(", ")
    out.append(rest)
    return ''.join(out)
src,dst,rename,launcher=sys.argv[1:5]
t=open(src).read()
t=t.replace(launcher+"(", rename+"(")
open(dst,'w').write(host_launches(t))
