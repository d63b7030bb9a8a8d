long quadrant_transform(int x, int y)
{
    int q = (x < 0) * 2 + (y < 0);
    long lx = x, ly = y;
    switch (q) {
    case 0:
        break;
    case 1:
        ly = -ly;
        break;
    case 2:
        lx = -lx;
        break;
    case 3:
        lx = -lx;
        ly = -ly;
        break;
    }
    return lx * 100000L + ly + q * 10000000000L;
}
