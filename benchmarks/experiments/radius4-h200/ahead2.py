"""Writes variant F of a ring kernel (acoustic25 f32): the grids read at the
cell are loaded two planes ahead (into `after`, moved to `next` a plane later)
instead of one. Usage: ahead2.py IN.cu OUT.cu"""
import sys, re
s = open(sys.argv[1]).read()
def once(old, new):
    global s
    assert s.count(old) == 1, old
    s = s.replace(old, new)
once("    float next1[4];   /* `cur_vel` at its cells, at the next plane it computes */\n",
     "    float next1[4];   /* `cur_vel` at its cells, at the next plane it computes */\n"
     "    float after0[4], after1[4]; /* the same a plane later */\n")
once("        now1[j] = t.next1[j];\n",
     "        now1[j] = t.next1[j];\n"
     "    #pragma unroll\n    for (int j = 0; j < 4; ++j) {\n        t.next0[j] = t.after0[j];\n        t.next1[j] = t.after1[j];\n    }\n")
once("    if (q + 1 >= 4 && q + 1 < n0 - 4) {\n        const size_t at = (q + 1) * s0;",
     "    if (q + 2 >= 4 && q + 2 < n0 - 4) {\n        const size_t at = (q + 2) * s0;")
# the loads' targets
body_start = s.index("const size_t at = (q + 2) * s0;")
body_end = s.index("stencils_cuda__acoustic25__update_u_wait<2>();", body_start)
body = s[body_start:body_end].replace("t.next0[", "t.after0[").replace("t.next1[", "t.after1[")
s = s[:body_start] + body + s[body_end:]
once("        t.next1[j] = 0.0f;\n", "        t.next1[j] = 0.0f;\n        t.after0[j] = 0.0f;\n        t.after1[j] = 0.0f;\n")
open(sys.argv[2], 'w').write(s)
