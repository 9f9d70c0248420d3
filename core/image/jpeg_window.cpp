#include "jpeg_window.h"

// jpeglib.h needs FILE and size_t declared first.
#include <cstddef>
#include <cstdio>
// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include <algorithm>
#include <array>
#include <csetjmp>
#include <cstring>
#include <vector>

#include "orchestrate/error.h"

namespace orchestrate {

namespace {

// libjpeg reports a fatal error by calling error_exit, which must not
// return; the documented way out is longjmp back to a setjmp (guarded()).
// Warnings are kept, not printed: a truncated file is reported only as one.
struct ErrorManager {
  jpeg_error_mgr library;  // first, so libjpeg's pointer to it is ours too
  std::jmp_buf escape;
  char message[JMSG_LENGTH_MAX];
  bool truncated;
  bool too_many_scans;
};

void on_error(j_common_ptr info) {
  auto* errors = reinterpret_cast<ErrorManager*>(info->err);
  (*info->err->format_message)(info, errors->message);
  std::longjmp(errors->escape, 1);
}

void on_message(j_common_ptr info, int level) {
  // libjpeg fills in the rest of a file that ends early with grey and says
  // so only as a warning; a training sample must not be made of that. Other
  // warnings (stray bytes between markers) are common and harmless.
  if (level < 0 && info->err->msg_code == JWRN_JPEG_EOF) reinterpret_cast<ErrorManager*>(info->err)->truncated = true;
}

// Called as each scan is read: a progressive file of thousands of scans is
// stopped at the limit instead of taking minutes (image_limits.h).
void on_progress(j_common_ptr info) {
  if (!info->is_decompressor) return;
  const auto* decompress = reinterpret_cast<j_decompress_ptr>(info);
  if (decompress->input_scan_number > kMaxJpegScans) {
    auto* errors = reinterpret_cast<ErrorManager*>(info->err);
    errors->too_many_scans = true;
    std::snprintf(errors->message, sizeof errors->message, "more than %d progressive scans: a decompression bomb?", kMaxJpegScans);
    std::longjmp(errors->escape, 1);
  }
}

// One per thread, made on its first JPEG and reused: libjpeg's own state
// lives as long as the thread; each image's buffers are freed by
// jpeg_abort_decompress.
struct ThreadDecoder {
  jpeg_decompress_struct info{};
  ErrorManager errors{};
  jpeg_progress_mgr progress{};
  bool ready = false;
  std::vector<JSAMPLE> rows;  // scratch when the decoded columns are wider than the window's

  ThreadDecoder() {
    info.err = jpeg_std_error(&errors.library);
    errors.library.error_exit = on_error;
    errors.library.emit_message = on_message;
    progress.progress_monitor = on_progress;
    if (setjmp(errors.escape) != 0) return;  // out of memory: ready stays false
    jpeg_create_decompress(&info);
    info.progress = &progress;
    ready = true;
  }
  ~ThreadDecoder() {
    if (ready) jpeg_destroy_decompress(&info);
  }
  ThreadDecoder(const ThreadDecoder&) = delete;
  ThreadDecoder& operator=(const ThreadDecoder&) = delete;
};

ThreadDecoder& thread_decoder() {
  thread_local ThreadDecoder decoder;
  if (!decoder.ready) throw Error("cannot start the JPEG decoder (out of memory)");
  return decoder;
}

// Runs libjpeg calls with a way back from error_exit. Nothing with a
// destructor lives between the setjmp and the calls' frames (`call` only
// calls libjpeg), so the longjmp skips no destructor. False: libjpeg
// failed, decoder.errors.message says why.
template <typename Call>
[[nodiscard]] bool guarded(ThreadDecoder& decoder, const Call& call) {
  if (setjmp(decoder.errors.escape) != 0) return false;
  call();
  return true;
}

// Starts a new image: whatever the last one left (an error part way, a
// window that stopped early) is dropped first.
[[nodiscard]] bool read_header(ThreadDecoder& decoder, std::string_view bytes) {
  jpeg_abort_decompress(&decoder.info);
  decoder.errors.truncated = false;
  decoder.errors.too_many_scans = false;
  decoder.errors.message[0] = '\0';
  return guarded(decoder, [&] {
    jpeg_mem_src(&decoder.info, reinterpret_cast<const unsigned char*>(bytes.data()),
                 static_cast<unsigned long>(bytes.size()));
    jpeg_read_header(&decoder.info, TRUE);
  });
}

[[noreturn]] void fail(ThreadDecoder& decoder, const std::string& source, const char* what) {
  const std::string why = decoder.errors.message;
  jpeg_abort_decompress(&decoder.info);
  throw Error(source + ": " + what + " (" + why + ")");
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

int jpeg_scale_eighths(std::int64_t height, std::int64_t width, std::int64_t min_side) {
  if (min_side <= 0) return 8;
  for (int eighths = 1; eighths < 8; eighths *= 2)
    if (ceil_div(height * eighths, 8) >= min_side && ceil_div(width * eighths, 8) >= min_side) return eighths;
  return 8;
}

ImageHeader read_jpeg_header(std::string_view bytes, const std::string& source) {
  ThreadDecoder& decoder = thread_decoder();
  if (!read_header(decoder, bytes)) fail(decoder, source, "not a readable JPEG");
  const ImageHeader header{ImageFormat::jpeg, decoder.info.image_width, decoder.info.image_height,
                           decoder.info.jpeg_color_space == JCS_GRAYSCALE};
  jpeg_abort_decompress(&decoder.info);
  return header;
}

PixelLayout decode_jpeg_window(std::string_view bytes, const std::string& source, std::int64_t max_pixels,
                               const ChooseWindow& choose, const PixelBuffer& buffer, bool four_byte_rgb) {
  ThreadDecoder& decoder = thread_decoder();
  jpeg_decompress_struct& info = decoder.info;
  if (!read_header(decoder, bytes)) fail(decoder, source, "not a readable JPEG");
  const std::int64_t height = info.image_height, width = info.image_width;
  try {
    check_image_size(width, height, source, max_pixels);
  } catch (...) {
    jpeg_abort_decompress(&info);
    throw;
  }
  const DecodeWindow window = choose ? choose(height, width) : whole_image(height, width);
  check_window(window, height, width);
  const bool grey = info.jpeg_color_space == JCS_GRAYSCALE;
  const int eighths = jpeg_scale_eighths(window.height, window.width, window.min_side);
  // As TurboJPEG's tjDecompress2 with TJFLAG_ACCURATEDCT sets them, so a
  // whole image decodes to the same bytes it gave (image_decode_test).
  info.out_color_space = grey ? JCS_GRAYSCALE : four_byte_rgb ? JCS_EXT_RGBX : JCS_RGB;
  info.dct_method = JDCT_ISLOW;
  info.scale_num = static_cast<unsigned>(eighths);
  info.scale_denom = 8;
  // The window at the chosen scale: the stored pixels it covers, rounded out.
  const std::int64_t top = window.top * eighths / 8, left = window.left * eighths / 8;
  std::int64_t bottom = ceil_div((window.top + window.height) * eighths, 8);
  std::int64_t right = ceil_div((window.left + window.width) * eighths, 8);
  if (!guarded(decoder, [&] { jpeg_start_decompress(&info); })) fail(decoder, source, "corrupt JPEG");
  bottom = std::min<std::int64_t>(bottom, info.output_height);
  right = std::min<std::int64_t>(right, info.output_width);
  const std::int64_t components = info.output_components;
  const PixelLayout layout{bottom - top, right - left, components, false, components == 4};
  // The decoded columns reach one iMCU (the widest component's block at
  // this scale) beyond the window on either side where the image goes on:
  // the chroma upsampling blends each pixel with its neighbours, and at the
  // edge of a cropped decode it has none, so the window's own edge pixels
  // would differ from a whole decode's. libjpeg then widens the columns to
  // whole iMCUs on the left.
  const std::int64_t margin = static_cast<std::int64_t>(info.max_h_samp_factor) * eighths;
  const std::int64_t decode_left = std::max<std::int64_t>(0, left - margin);
  const std::int64_t decode_right = std::min<std::int64_t>(info.output_width, right + margin);
  JDIMENSION first_column = static_cast<JDIMENSION>(decode_left);
  JDIMENSION columns = static_cast<JDIMENSION>(decode_right - decode_left);
  if (decode_left > 0 || decode_right < static_cast<std::int64_t>(info.output_width))
    if (!guarded(decoder, [&] { jpeg_crop_scanline(&info, &first_column, &columns); }))
      fail(decoder, source, "corrupt JPEG");
  std::uint8_t* out = buffer(layout);
  const std::int64_t out_row = layout.width * components;
  const std::int64_t skip_bytes = (left - static_cast<std::int64_t>(first_column)) * components;
  const bool direct = skip_bytes == 0 && static_cast<std::int64_t>(columns) == layout.width;
  // A few rows per call: with 2x2 chroma libjpeg makes rows in pairs, and
  // one row at a time would cost it an extra copy.
  constexpr std::int64_t kRowsPerCall = 8;
  if (!direct) decoder.rows.resize(static_cast<std::size_t>(kRowsPerCall * columns * components));
  std::int64_t done = 0;
  const bool read = guarded(decoder, [&] {
    if (top > 0) jpeg_skip_scanlines(&info, static_cast<JDIMENSION>(top));
    while (done < layout.height) {
      std::array<JSAMPROW, kRowsPerCall> rows{};
      const std::int64_t want = std::min(kRowsPerCall, layout.height - done);
      for (std::int64_t r = 0; r < want; ++r)
        rows[static_cast<std::size_t>(r)] = direct ? out + (done + r) * out_row
                                                   : decoder.rows.data() + r * columns * components;
      const auto got = static_cast<std::int64_t>(jpeg_read_scanlines(&info, rows.data(), static_cast<JDIMENSION>(want)));
      if (!direct)
        for (std::int64_t r = 0; r < got; ++r)
          std::memcpy(out + (done + r) * out_row, rows[static_cast<std::size_t>(r)] + skip_bytes,
                      static_cast<std::size_t>(out_row));
      done += got;
      if (got == 0) break;  // cannot happen with memory input; never spin
    }
  });
  if (!read) fail(decoder, source, "corrupt JPEG");
  if (decoder.errors.truncated || done < layout.height) {
    std::snprintf(decoder.errors.message, sizeof decoder.errors.message, "Premature end of JPEG file");
    fail(decoder, source, "corrupt JPEG");
  }
  // Rows below the window are never decoded.
  jpeg_abort_decompress(&info);
  return layout;
}

}  // namespace orchestrate
