long pack_hms(long seconds)
{
    int neg = seconds < 0;
    unsigned long s = neg ? 0UL - (unsigned long)seconds : (unsigned long)seconds;
    unsigned long h = s / 3600;
    unsigned long m = (s % 3600) / 60;
    unsigned long r = s % 60;
    long packed = (long)(h * 10000 + m * 100 + r);
    return neg ? -packed : packed;
}
