static long hanoi_rec(int n, int from, int to, int via, unsigned long *check)
{
    if (n == 0)
        return 0;
    long moves = hanoi_rec(n - 1, from, via, to, check);
    *check = *check * 31u + (unsigned long)(n * 100 + from * 10 + to);
    moves += 1;
    moves += hanoi_rec(n - 1, via, to, from, check);
    return moves;
}

long hanoi(int n, unsigned long *check)
{
    *check = 0;
    return hanoi_rec(n, 1, 3, 2, check);
}
