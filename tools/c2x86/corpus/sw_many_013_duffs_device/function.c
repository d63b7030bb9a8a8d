long duff_copy_sum(short *to, const short *from, int count)
{
    long sum = 0;
    if (count <= 0)
        return 0;
    int n = (count + 7) / 8;
    switch (count % 8) {
    case 0: do { sum += *from; *to++ = *from++;
    /* fall through */
    case 7:      sum += *from; *to++ = *from++;
    /* fall through */
    case 6:      sum += *from; *to++ = *from++;
    /* fall through */
    case 5:      sum += *from; *to++ = *from++;
    /* fall through */
    case 4:      sum += *from; *to++ = *from++;
    /* fall through */
    case 3:      sum += *from; *to++ = *from++;
    /* fall through */
    case 2:      sum += *from; *to++ = *from++;
    /* fall through */
    case 1:      sum += *from; *to++ = *from++;
            } while (--n > 0);
    }
    return sum;
}
