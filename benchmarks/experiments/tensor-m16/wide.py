# python3 wide.py IN OUT: acoustic25's generated `tensor` (whose launcher runs
# warps of 8 x 8 cells only, as it reads two grids more at the cell) made to
# run warps of 16 x 8 on rows of an even number of cells, as star3d25's does:
# the products of rows g + 8 along `y` that rows g do not take (radius 4:
# bands from rows 16 and 20), and the launcher's choice.
import re, sys
s = open(sys.argv[1]).read()
last = re.search(r'\n( *)stencil_mma<H>\(sy, cy\[3\], cy\[1\], ay\[(\d+)\]\);', s)
ind, at = last.group(1), int(last.group(2))
pitch = at // 12  # the band from row 12
extra = (f'\n{ind}if (H == 2) {{'
         f'\n{ind}    stencil_mma<H>(sy, 0.0, cy[2], ay[{16 * pitch}]);'
         f'\n{ind}    stencil_mma<H>(sy, 0.0, cy[3], ay[{20 * pitch}]);'
         f'\n{ind}}}')
s = s[:last.end()] + extra + s[last.end():]
old = re.search(r'const int threads = 512; /\*[^*]*\*/', s).group(0)
s = s.replace(old, 'const bool wide = n2 % 2 == 0;\n    const int threads = wide ? 256 : 512;')
s = re.sub(r'(\w+_kernel)<1, 1, false>', r'(wide ? \1<2, 1, false> : \1<1, 1, false>)', s)
s = re.sub(r'(\w+_kernel)<1, 2, false>', r'\1<2, 2, false>', s)
open(sys.argv[2], 'w').write(s)
