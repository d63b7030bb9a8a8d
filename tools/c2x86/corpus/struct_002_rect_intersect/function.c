struct rect {
    int left, top, right, bottom;
};

int rect_intersect(const struct rect *a, const struct rect *b, struct rect *out)
{
    out->left = a->left > b->left ? a->left : b->left;
    out->top = a->top > b->top ? a->top : b->top;
    out->right = a->right < b->right ? a->right : b->right;
    out->bottom = a->bottom < b->bottom ? a->bottom : b->bottom;
    if (out->left >= out->right || out->top >= out->bottom) {
        out->left = out->top = out->right = out->bottom = 0;
        return 0;
    }
    return (out->right - out->left) * (out->bottom - out->top);
}
