int merge_sorted(const int *a, int na, const int *b, int nb, int *out)
{
    const int *ea = a + na, *eb = b + nb;
    int *o = out;
    while (a < ea && b < eb)
        *o++ = (*b < *a) ? *b++ : *a++;
    while (a < ea)
        *o++ = *a++;
    while (b < eb)
        *o++ = *b++;
    return (int)(o - out);
}
