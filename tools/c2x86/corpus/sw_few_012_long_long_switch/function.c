int ll_bucket(long long x)
{
    switch (x) {
    case 0LL:
        return 0;
    case 4294967296LL:
        return 1;
    case -4294967296LL:
        return 2;
    case 9223372036854775807LL:
        return 3;
    default:
        return x < 0 ? -1 : 9;
    }
}
