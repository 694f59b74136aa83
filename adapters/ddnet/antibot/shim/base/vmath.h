// Stands in for DDNet's src/base/vmath.h, which the vendored antibot_data.h includes for
// vec2. DDNet's vec2 is vector2_base<float>: two floats (x, y), each in a union with an
// alias (u, v), no virtuals: the same layout as this struct, which is all the module
// needs, since it only reads the server's vec2s. The static_assert pins the layout.
#ifndef BASE_VMATH_H
#define BASE_VMATH_H

struct vec2 {
    float x;
    float y;
};
static_assert(sizeof(vec2) == 2 * sizeof(float), "vec2 must be laid out as DDNet's");

#endif  // BASE_VMATH_H
