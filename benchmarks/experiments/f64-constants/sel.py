import re,sys
s=open(sys.argv[1]).read()
pat=re.compile(r'(?m)^(\s*)if \(step && in_x\[k\]\) \{\n\s*v = (.*);\n\s*\}\n')
s2,n=pat.subn(lambda m:'%s{\n%s    const double upd = %s;\n%s    v = step && in_x[k] ? upd : v;\n%s}\n'%(m.group(1),m.group(1),m.group(2),m.group(1),m.group(1)),s)
assert n>=1,n
open(sys.argv[2],'w').write(s2); print(sys.argv[1],n)
