# coef.py IN OUT: f64 literals of the update lines (`v = ...;`) read from a __constant__ array.
import re,sys
s=open(sys.argv[1]).read()
consts=[]
def sub_line(m):
    line=m.group(0)
    def lit(mm):
        consts.append(mm.group(0)); return 'stencil_coef[%d]'%(len(consts)-1)
    body=re.sub(r'/\*.*?\*/','',line)
    return re.sub(r'(?<![\w\[.])\d+\.\d*(?:e[-+]?\d+)?(?![\w\]])',lit,body)
s2=re.sub(r'(?m)^\s*v = .*;\s*$',sub_line,s)
assert consts, 'no literals'
decl='static __constant__ double stencil_coef[%d] = {%s};\n'%(len(consts),', '.join(consts))
s2=s2.replace('#include <mutex>\n','#include <mutex>\n'+decl,1)
open(sys.argv[2],'w').write(s2)
print(sys.argv[1],len(consts))
