int floor_divmod(int a, int b, int *rem)
{
    int q = a / b;
    int r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) {
        q -= 1;
        r += b;
    }
    *rem = r;
    return q;
}
