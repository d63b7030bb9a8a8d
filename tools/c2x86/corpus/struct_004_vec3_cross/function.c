struct vec3 {
    float x, y, z;
};

struct vec3 vec3_cross(struct vec3 a, struct vec3 b)
{
    struct vec3 r;
    r.x = a.y * b.z - a.z * b.y;
    r.y = a.z * b.x - a.x * b.z;
    r.z = a.x * b.y - a.y * b.x;
    return r;
}
