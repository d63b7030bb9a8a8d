int count_words(const char *s, int *longest)
{
    int words = 0, cur = 0, best = 0;
    int in_word = 0;
    for (;; s++) {
        char c = *s;
        int sep = c == ' ' || c == '\t' || c == '\n' || c == '\0';
        if (!sep) {
            if (!in_word)
                words++;
            in_word = 1;
            cur++;
        } else {
            if (cur > best)
                best = cur;
            cur = 0;
            in_word = 0;
        }
        if (c == '\0')
            break;
    }
    *longest = best;
    return words;
}
