int digital_root(int n)
{
    if (n < 0)
        return -1;
    if (n == 0)
        return 0;
    return 1 + (n - 1) % 9;
}
