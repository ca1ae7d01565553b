// Prints String.valueOf for doubles and floats, one per line, as the oracle for
// tests/parser/java_float_text_test.cc: "D <16 hex bits> <text>" or "F <8 hex bits> <text>".
// Usage: java FloatTextOracle <random count> <seed>
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.util.SplittableRandom;

public final class FloatTextOracle {
  private static BufferedWriter out;

  private static void d(double v) throws IOException {
    out.write("D ");
    out.write(String.format("%016x", Double.doubleToRawLongBits(v)));
    out.write(' ');
    out.write(String.valueOf(v));
    out.write('\n');
  }

  private static void f(float v) throws IOException {
    out.write("F ");
    out.write(String.format("%08x", Float.floatToRawIntBits(v)));
    out.write(' ');
    out.write(String.valueOf(v));
    out.write('\n');
  }

  // v and its neighbours on both sides.
  private static void dAround(double v, int n) throws IOException {
    double up = v, down = v;
    d(v);
    for (int i = 0; i < n; i++) {
      up = Math.nextUp(up);
      down = Math.nextDown(down);
      d(up);
      d(down);
    }
  }

  private static void fAround(float v, int n) throws IOException {
    float up = v, down = v;
    f(v);
    for (int i = 0; i < n; i++) {
      up = Math.nextUp(up);
      down = Math.nextDown(down);
      f(up);
      f(down);
    }
  }

  public static void main(String[] args) throws IOException {
    final int count = Integer.parseInt(args[0]);
    final SplittableRandom rnd = new SplittableRandom(Long.parseLong(args[1]));
    out = new BufferedWriter(new OutputStreamWriter(System.out, "US-ASCII"), 1 << 16);

    // Fixed edge cases: zeros, extremes, special values, the layout boundaries.
    double[] dEdges = {0.0, -0.0, Double.MAX_VALUE, -Double.MAX_VALUE, Double.MIN_VALUE, Double.MIN_NORMAL,
        Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1e-3, 1e7, 0.1, 100, 1e20, 0.0000123,
        10000000, -1e300, 1.7976931348623157e308, 2.82879384806159E17, 1234567.125, 1e23};
    for (double v : dEdges) dAround(v, 3);
    float[] fEdges = {0.0f, -0.0f, Float.MAX_VALUE, -Float.MAX_VALUE, Float.MIN_VALUE, Float.MIN_NORMAL,
        Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 1e-3f, 1e7f, 0.1f, 3.4e38f, 123456790f,
        3.14159f, 1e10f};
    for (float v : fEdges) fAround(v, 3);

    // Powers of ten and their neighbours, over the whole range; powers of two.
    for (int e = -325; e <= 308; e++) dAround(Double.parseDouble("1e" + e), 2);
    for (int e = -46; e <= 38; e++) fAround(Float.parseFloat("1e" + e), 2);
    for (int e = -1074; e <= 1023; e++) dAround(Math.scalb(1.0, e), 1);
    for (int e = -149; e <= 127; e++) fAround(Math.scalb(1.0f, e), 1);
    // Integers (the exact-integer path, and where it ends at 2^62).
    for (long i = 1; i <= 100000; i++) {
      d(i);
      f(i);
    }
    for (int i = 0; i < 64; i++) {
      dAround((double) (1L << i) * 3, 1);
      fAround((float) (1L << i) * 3, 1);
    }

    // Random values: uniform bit patterns (every exponent), subnormals, small
    // integers, and decimals with few digits as a database holds them.
    for (int i = 0; i < count; i++) {
      switch (i % 8) {
        case 0:
        case 1:
          d(Double.longBitsToDouble(rnd.nextLong()));
          break;
        case 2:
          f(Float.intBitsToFloat(rnd.nextInt()));
          break;
        case 3:
          f(Float.intBitsToFloat(rnd.nextInt()));
          break;
        case 4:
          d(Double.longBitsToDouble(rnd.nextLong() & 0x800fffffffffffffL));  // subnormal
          f(Float.intBitsToFloat(rnd.nextInt() & 0x807fffff));
          break;
        case 5: {
          long digits = rnd.nextLong(1, 1_000_000_000_000L);
          int scale = rnd.nextInt(0, 20);
          d(Double.parseDouble(digits + "e-" + scale));
          break;
        }
        case 6: {
          int digits = rnd.nextInt(1, 10_000_000);
          int scale = rnd.nextInt(-10, 12);
          f(Float.parseFloat(digits + "e" + (-scale)));
          break;
        }
        default:
          d(rnd.nextDouble() * Math.pow(10, rnd.nextInt(-8, 12)));
          f((float) (rnd.nextDouble() * Math.pow(10, rnd.nextInt(-6, 10))));
      }
    }
    // Decimals of 13 to 15 digits in [1e-3, 1e7) and their neighbours: where
    // WriteJavaDoubleText prints the decimal without running the generator.
    for (int i = 0; i < count / 8; i++) {
      int digits = rnd.nextInt(13, 16);
      long value = rnd.nextLong((long) Math.pow(10, digits - 1), (long) Math.pow(10, digits));
      int lead = rnd.nextInt(-3, 7);
      double v = Double.parseDouble((i % 2 == 0 ? "-" : "") + value + "e" + (lead - digits + 1));
      dAround(v, 1);
    }
    out.flush();
  }
}
