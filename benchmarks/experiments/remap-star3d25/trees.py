#!/usr/bin/env python3
"""trees.py IN OUT: rewrites star3d25's generated updates so that each sum of the 6
points at one distance, and the sum of the 4 distances' terms, is a balanced tree
((a + b) + (c + d)) + (e + f) instead of left to right: a chain of 3 additions
where there were 5, and of 2 where there were 3, so more of a cell's operations
are independent. The results then differ from the reference in the last bits."""
import re, sys
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()

def split_top(body):
    """The terms of `body` joined by ' + ' outside parentheses and brackets."""
    terms, depth, cur, i = [], 0, '', 0
    while i < len(body):
        ch = body[i]
        depth += ch in '(['
        depth -= ch in ')]'
        if depth == 0 and body.startswith(' + ', i):
            terms.append(cur); cur = ''; i += 3; continue
        cur += ch; i += 1
    return terms + [cur]

def tree(terms):
    while len(terms) > 1:
        terms = [f'({terms[i]} + {terms[i + 1]})' if i + 1 < len(terms) else terms[i] for i in range(0, len(terms), 2)]
    return terms[0]

# the 6-point sums: parentheses holding 6 terms without parentheses
n6 = 0
def six(m):
    global n6
    terms = split_top(m.group(1))
    n6 += len(terms) == 6
    return tree(terms) if len(terms) == 6 else m.group(0)
s = re.sub(r'\(([^()]+)\)', six, s)
# the sum of the 4 distances' terms: the group opening at '(1.6f * '
out, i, n4 = '', 0, 0
while True:
    j = s.find('(1.6f * ', i)
    if j < 0:
        out += s[i:]; break
    depth, k = 0, j
    while True:
        depth += s[k] == '('; depth -= s[k] == ')'
        if depth == 0: break
        k += 1
    terms = split_top(s[j + 1:k])
    assert len(terms) == 4, terms
    out += s[i:j] + tree(terms); i = k + 1; n4 += 1
open(dst, 'w').write(out)
print(f'{dst}: {n6} sums of 6 and {n4} of 4 as trees')
