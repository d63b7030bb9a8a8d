struct point {
    int x;
    int y;
};

long long manhattan_and_sq(struct point a, struct point b, long long *sq)
{
    long long dx = (long long)a.x - b.x;
    long long dy = (long long)a.y - b.y;
    *sq = dx * dx + dy * dy;
    if (dx < 0) dx = -dx;
    if (dy < 0) dy = -dy;
    return dx + dy;
}
