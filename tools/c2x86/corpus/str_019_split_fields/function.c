int field_at(const char *line, char delim, int k, char *out, int cap)
{
    int field = 0;
    const char *start = line;
    for (const char *p = line;; p++) {
        if (*p == delim || *p == '\0') {
            if (field == k) {
                int n = (int)(p - start);
                if (n >= cap)
                    n = cap - 1;
                for (int i = 0; i < n; i++)
                    out[i] = start[i];
                out[n] = '\0';
                return n;
            }
            if (*p == '\0')
                break;
            field++;
            start = p + 1;
        }
    }
    out[0] = '\0';
    return -1;
}
