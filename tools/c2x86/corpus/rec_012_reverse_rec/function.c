static int rev(const char *s, char *out)
{
    if (*s == '\0')
        return 0;
    int n = rev(s + 1, out);
    out[n] = *s;
    return n + 1;
}

int reverse_copy_rec(const char *s, char *out)
{
    int n = rev(s, out);
    out[n] = '\0';
    return n;
}
