#include <string.h>

struct wcount {
    char word[16];
    int count;
};

int top_word(const char *text, char *out, int *distinct)
{
    struct wcount table[32];
    int n = 0;
    char cur[16];
    int len = 0;
    for (const char *p = text;; p++) {
        char c = *p;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c + 32);
        if (c >= 'a' && c <= 'z') {
            if (len < 15)
                cur[len++] = c;
            continue;
        }
        if (len > 0) {
            cur[len] = '\0';
            int i;
            for (i = 0; i < n; i++)
                if (strcmp(table[i].word, cur) == 0)
                    break;
            if (i == n && n < 32) {
                memcpy(table[n].word, cur, (size_t)len + 1);
                table[n].count = 0;
                n++;
            }
            if (i < n)
                table[i].count++;
            len = 0;
        }
        if (c == '\0')
            break;
    }
    *distinct = n;
    int best = -1;
    for (int i = 0; i < n; i++)
        if (best < 0 || table[i].count > table[best].count)
            best = i;
    if (best < 0) {
        out[0] = '\0';
        return 0;
    }
    strcpy(out, table[best].word);
    return table[best].count;
}
