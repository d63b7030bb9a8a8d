struct pt {
    double x, y;
};

struct segment {
    struct pt a;
    struct pt b;
    int id;
};

struct seginfo {
    struct pt mid;
    double len2;
    int id;
};

struct seginfo segment_info(const struct segment *s)
{
    struct seginfo r;
    r.mid.x = (s->a.x + s->b.x) * 0.5;
    r.mid.y = (s->a.y + s->b.y) * 0.5;
    double dx = s->b.x - s->a.x;
    double dy = s->b.y - s->a.y;
    r.len2 = dx * dx + dy * dy;
    r.id = s->id * 2 + 1;
    return r;
}
