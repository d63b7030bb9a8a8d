int lcp_words(const char *const *words, int n)
{
    if (n <= 0)
        return 0;
    int len = 0;
    for (;;) {
        char c = words[0][len];
        if (c == '\0')
            return len;
        for (int i = 1; i < n; i++)
            if (words[i][len] != c)
                return len;
        len++;
    }
}
