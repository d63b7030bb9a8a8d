// Ray tracing of a scene with 64 sphere objects into a 160x120 image,
// focused on constant memory: the scene (spheres and light) is uploaded once
// with cudaMemcpyToSymbol, and since all threads of a warp test the same
// sphere at the same time, every read is a constant-cache broadcast. One
// thread per pixel on a 2D grid: primary ray, nearest hit, Lambert shading
// and a shadow ray towards a point light. Small __device__ helpers keep the
// vector math readable.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t e = (call);                                                 \
        if (e != cudaSuccess) {                                                 \
            fprintf(stderr, "CUDA error %s at line %d\n", cudaGetErrorString(e), __LINE__); \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

#define WIDTH 160
#define HEIGHT 120
#define NUM_SPHERES 64

struct Sphere {
    float3 center;
    float radius;
    float3 color;
};

__constant__ Sphere cSpheres[NUM_SPHERES];
__constant__ float3 cLight;

__device__ float3 sub(float3 a, float3 b) { return make_float3(a.x - b.x, a.y - b.y, a.z - b.z); }
__device__ float3 add(float3 a, float3 b) { return make_float3(a.x + b.x, a.y + b.y, a.z + b.z); }
__device__ float3 scale(float3 a, float s) { return make_float3(a.x * s, a.y * s, a.z * s); }
__device__ float dot3(float3 a, float3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ float3 normalize3(float3 a) { return scale(a, 1.0f / sqrtf(dot3(a, a))); }

// Distance along the (normalized) ray to the sphere, or -1 if missed.
__device__ float intersect(const Sphere& s, float3 origin, float3 dir) {
    const float3 oc = sub(origin, s.center);
    const float b = dot3(oc, dir);
    const float c = dot3(oc, oc) - s.radius * s.radius;
    const float disc = b * b - c;
    if (disc < 0.0f) return -1.0f;
    const float sq = sqrtf(disc);
    float t = -b - sq;
    if (t < 1e-3f) t = -b + sq;
    return t >= 1e-3f ? t : -1.0f;
}

__device__ int closestHit(float3 origin, float3 dir, float* tHit) {
    int hit = -1;
    float best = 1e30f;
    for (int i = 0; i < NUM_SPHERES; ++i) {
        const float t = intersect(cSpheres[i], origin, dir);
        if (t > 0.0f && t < best) {
            best = t;
            hit = i;
        }
    }
    *tHit = best;
    return hit;
}

__global__ void render(uchar4* image, int* hitIds) {
    const int px = blockIdx.x * blockDim.x + threadIdx.x;
    const int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= WIDTH || py >= HEIGHT) return;

    const float3 eye = make_float3(0.0f, 0.0f, -6.0f);
    const float u = (2.0f * (px + 0.5f) / WIDTH - 1.0f) * (float)WIDTH / HEIGHT;
    const float v = 1.0f - 2.0f * (py + 0.5f) / HEIGHT;
    const float3 dir = normalize3(make_float3(u, v, 1.5f));

    float t;
    const int id = closestHit(eye, dir, &t);
    uchar4 out = make_uchar4(20, 20, 40, 255);  // background
    if (id >= 0) {
        const Sphere s = cSpheres[id];
        const float3 p = add(eye, scale(dir, t));
        const float3 n = normalize3(sub(p, s.center));
        const float3 toLight = sub(cLight, p);
        const float3 l = normalize3(toLight);
        float shade = 0.1f;  // ambient
        float tShadow;
        const int blocker = closestHit(p, l, &tShadow);
        const bool shadowed = blocker >= 0 && tShadow * tShadow < dot3(toLight, toLight);
        if (!shadowed) shade += 0.9f * fmaxf(dot3(n, l), 0.0f);
        out = make_uchar4((unsigned char)(255.0f * shade * s.color.x), (unsigned char)(255.0f * shade * s.color.y),
                          (unsigned char)(255.0f * shade * s.color.z), 255);
    }
    image[py * WIDTH + px] = out;
    hitIds[py * WIDTH + px] = id;
}

int main() {
    Sphere spheres[NUM_SPHERES];
    for (int i = 0; i < NUM_SPHERES; ++i) {
        const int gx = i % 8, gy = i / 8;
        spheres[i].center = make_float3(-3.5f + gx * 1.0f, -2.6f + gy * 0.75f, 2.0f + (float)((i * 7) % 5));
        spheres[i].radius = 0.25f + 0.05f * (float)(i % 4);
        spheres[i].color = make_float3(0.3f + 0.1f * (i % 7), 0.3f + 0.1f * ((i / 3) % 7), 0.3f + 0.1f * ((i / 5) % 7));
    }
    const float3 light = make_float3(-4.0f, 6.0f, -4.0f);
    CUDA_CHECK(cudaMemcpyToSymbol(cSpheres, spheres, sizeof(spheres)));
    CUDA_CHECK(cudaMemcpyToSymbol(cLight, &light, sizeof(light)));

    uchar4* dImage;
    int* dHits;
    CUDA_CHECK(cudaMalloc(&dImage, WIDTH * HEIGHT * sizeof(uchar4)));
    CUDA_CHECK(cudaMalloc(&dHits, WIDTH * HEIGHT * sizeof(int)));
    dim3 block(16, 8);
    dim3 grid((WIDTH + block.x - 1) / block.x, (HEIGHT + block.y - 1) / block.y);
    render<<<grid, block>>>(dImage, dHits);
    CUDA_CHECK(cudaGetLastError());

    static uchar4 image[WIDTH * HEIGHT];
    static int hits[WIDTH * HEIGHT];
    CUDA_CHECK(cudaMemcpy(image, dImage, sizeof(image), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hits, dHits, sizeof(hits), cudaMemcpyDeviceToHost));

    int covered = 0, distinct = 0;
    int perSphere[NUM_SPHERES] = {0};
    double brightness = 0.0;
    for (int i = 0; i < WIDTH * HEIGHT; ++i) {
        if (hits[i] >= 0) {
            ++covered;
            perSphere[hits[i]]++;
        }
        brightness += (image[i].x + image[i].y + image[i].z) / 3.0;
    }
    for (int s = 0; s < NUM_SPHERES; ++s) distinct += perSphere[s] > 0;

    printf("image %dx%d, %d spheres\n", WIDTH, HEIGHT, NUM_SPHERES);
    printf("pixels covered=%d visible spheres=%d\n", covered, distinct);
    printf("pixels of sphere 0=%d sphere 27=%d sphere 63=%d\n", perSphere[0], perSphere[27], perSphere[63]);
    printf("mean brightness=%.1f\n", brightness / (WIDTH * HEIGHT));
    const uchar4 c = image[(HEIGHT / 2) * WIDTH + WIDTH / 2];
    printf("center pixel: hit=%d rgb=(%d,%d,%d)\n", hits[(HEIGHT / 2) * WIDTH + WIDTH / 2], c.x, c.y, c.z);

    CUDA_CHECK(cudaFree(dImage));
    CUDA_CHECK(cudaFree(dHits));
    return 0;
}
