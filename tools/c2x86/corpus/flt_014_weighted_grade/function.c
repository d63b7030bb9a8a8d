float weighted_grade(float homework, float midterm, float final_exam, int bonus)
{
    float g = 0.2f * homework + 0.3f * midterm + 0.5f * final_exam;
    if (bonus)
        g += 2.5f;
    if (g > 100.0f)
        g = 100.0f;
    return g;
}
