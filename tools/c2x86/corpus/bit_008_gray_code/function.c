unsigned gray_roundtrip(unsigned n, unsigned *gray)
{
    unsigned g = n ^ (n >> 1);
    *gray = g;
    unsigned b = 0;
    for (; g; g >>= 1)
        b ^= g;
    return b;
}
