struct record {
    char tag;
    short count;
    int id;
    double weight;
    char flag;
    long long big;
};

long long record_checksum(const struct record *r, int n)
{
    long long sum = 0;
    for (int i = 0; i < n; i++) {
        sum += r[i].tag;
        sum += r[i].count * 3;
        sum += (long long)r[i].id * 7;
        sum += (long long)(r[i].weight * 100.0);
        sum += r[i].flag ? 1000 : 0;
        sum ^= r[i].big;
    }
    return sum;
}
