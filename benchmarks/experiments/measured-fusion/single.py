import json,glob,collections,sys
rows=[]
for f in sys.argv[1:]: rows+=json.load(open(f))
g=collections.defaultdict(dict)
for r in rows: g[(r['stencil'],r['dtype'],tuple(r['shape']))][r['variant']]=(r['gcells_per_s'],r['strategy'])
def single(st,dt,dims):
    if dims==3: return 'stream_s2_v_w' if st=='j3d7pt' else 'stream_q4_v'
    if st=='j2d5pt': return 'stream_s4_v' if dt=='f32' else 'stream_s4'
    if (st,dt) in [('j2d9pt_gol','f64'),('wave2d','f64')]: return 'stream_s4'
    if (st,dt)==('j2d9pt_gol','f32'): return 'stream_s4_v'
    return 'stream_q4_v'
out=[]
for k in g:
    st,dt,sh=k; cells=1
    for n in sh: cells*=n
    s=single(st,dt,len(sh))
    a=g[k].get('auto'); b=g[k].get(s)
    if not a or not b: continue
    if a[1].startswith('tensor'): continue
    out.append((len(sh),st,dt,cells,sh,a[0],s,b[0],b[0]/a[0],a[1].split()[0]))
for o in sorted(out, key=lambda o:(o[0],o[1],o[2],o[3])):
    print('%dD %-11s %s %9d %-14s auto %7.1f %-14s %7.1f  single/auto %5.2f %s %s'%(o[0],o[1],o[2],o[3],'x'.join(map(str,o[4])),o[5],o[6],o[7],o[8],o[9],'<-- single better' if o[8]>1.03 else ('' if o[8]>0.97 else 'fused better')))
