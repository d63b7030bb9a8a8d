/* A stand-in for miniaudio.h, which the ollama Go module's zip leaves out
 * (Go module zips drop vendor/ folders). llama.cpp's mtmd-helper.cpp uses
 * it only to decode audio input of multimodal models; kiln's test server
 * serves text models, so decoding fails cleanly instead. Written for kiln;
 * not miniaudio's code. */
#ifndef KILN_MINIAUDIO_STUB_H
#define KILN_MINIAUDIO_STUB_H
#include <stddef.h>
#include <stdint.h>
typedef int ma_result;
typedef uint64_t ma_uint64;
typedef uint32_t ma_uint32;
typedef enum { ma_format_unknown = 0, ma_format_f32 = 5 } ma_format;
#define MA_SUCCESS 0
#define MA_NOT_IMPLEMENTED (-29)
typedef struct { ma_format format; ma_uint32 channels, sampleRate; } ma_decoder_config;
typedef struct { int unused; } ma_decoder;
static inline ma_decoder_config ma_decoder_config_init(ma_format f, ma_uint32 c, ma_uint32 r) {
	ma_decoder_config cfg; cfg.format = f; cfg.channels = c; cfg.sampleRate = r; return cfg;
}
static inline ma_result ma_decoder_init_memory(const void *p, size_t n, const ma_decoder_config *c, ma_decoder *d) {
	(void)p; (void)n; (void)c; (void)d; return MA_NOT_IMPLEMENTED;
}
static inline ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder *d, ma_uint64 *n) { (void)d; *n = 0; return MA_NOT_IMPLEMENTED; }
static inline ma_result ma_decoder_read_pcm_frames(ma_decoder *d, void *o, ma_uint64 n, ma_uint64 *r) {
	(void)d; (void)o; (void)n; *r = 0; return MA_NOT_IMPLEMENTED;
}
static inline ma_result ma_decoder_uninit(ma_decoder *d) { (void)d; return MA_SUCCESS; }
#endif
