int find_substring(const char *hay, const char *needle)
{
    if (*needle == '\0')
        return 0;
    for (int i = 0; hay[i]; i++) {
        int j = 0;
        while (needle[j] && hay[i + j] == needle[j])
            j++;
        if (needle[j] == '\0')
            return i;
    }
    return -1;
}
