double round_with_mode(double x, int mode)
{
    long t = (long)x;
    switch (mode) {
    case 0:
        return (double)t;
    case 1:
        return (x < 0.0 && (double)t != x) ? (double)(t - 1) : (double)t;
    case 2:
        return (x > 0.0 && (double)t != x) ? (double)(t + 1) : (double)t;
    case 3:
        return x < 0.0 ? (double)(long)(x - 0.5) : (double)(long)(x + 0.5);
    }
    return x;
}
