static int cmp3(long a, long b)
{
    return (a > b) - (a < b);
}

long compare_three_way(long a, long b)
{
    switch (cmp3(a, b)) {
    case -1:
        return b - a;
    case 0:
        return a * 2;
    case 1:
        return a - b + 1000;
    }
    return 0;
}
