#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <algorithm>
struct Variant { const char *name; int size; void *launch; };
