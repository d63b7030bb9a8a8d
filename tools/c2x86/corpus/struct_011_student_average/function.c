struct student {
    int id;
    float scores[3];
    char name[12];
};

int best_student(const struct student *s, int n, float *best_avg)
{
    int best = -1;
    float bavg = -1.0f;
    for (int i = 0; i < n; i++) {
        float avg = s[i].scores[0] * 0.25f + s[i].scores[1] * 0.25f + s[i].scores[2] * 0.5f;
        if (avg > bavg) {
            bavg = avg;
            best = i;
        }
    }
    *best_avg = bavg;
    return best;
}
