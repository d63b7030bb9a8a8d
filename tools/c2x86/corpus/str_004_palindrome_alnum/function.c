static int is_alnum(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static char lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
}

int is_palindrome_alnum(const char *s)
{
    const char *e = s;
    while (*e)
        e++;
    if (e == s)
        return 1;
    e--;
    while (s < e) {
        if (!is_alnum(*s)) { s++; continue; }
        if (!is_alnum(*e)) { e--; continue; }
        if (lower(*s) != lower(*e))
            return 0;
        s++;
        e--;
    }
    return 1;
}
