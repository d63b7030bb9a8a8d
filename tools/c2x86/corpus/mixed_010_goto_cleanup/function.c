#include <stdlib.h>
#include <string.h>

long process_records(const int *recs, int n, int *bad_index)
{
    long result = -1;
    int *copy = NULL;
    long *acc = NULL;
    *bad_index = -1;
    if (n <= 0)
        goto out;
    copy = malloc((size_t)n * sizeof *copy);
    if (!copy)
        goto out;
    acc = calloc((size_t)n, sizeof *acc);
    if (!acc)
        goto out;
    memcpy(copy, recs, (size_t)n * sizeof *copy);
    for (int i = 0; i < n; i++) {
        if (copy[i] < 0) {
            *bad_index = i;
            result = -2;
            goto out;
        }
        acc[i] = (i > 0 ? acc[i - 1] : 0) + copy[i];
    }
    result = 0;
    for (int i = 0; i < n; i++)
        result = result * 31 % 1000000007L + acc[i] % 1000000007L;
out:
    free(acc);
    free(copy);
    return result;
}
