int is_anagram(const char *a, const char *b)
{
    int count[26] = {0};
    for (; *a; a++) {
        char c = *a;
        if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
        if (c >= 'a' && c <= 'z') count[c - 'a']++;
    }
    for (; *b; b++) {
        char c = *b;
        if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
        if (c >= 'a' && c <= 'z') count[c - 'a']--;
    }
    for (int i = 0; i < 26; i++)
        if (count[i] != 0)
            return 0;
    return 1;
}
