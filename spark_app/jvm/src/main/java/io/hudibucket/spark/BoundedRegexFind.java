package io.hudibucket.spark;

import java.util.regex.Pattern;

/**
 * {@code Matcher.find()} with a bound on its work, for bucket rules evaluated against partition paths.
 * java.util.regex backtracks with no limit, and some patterns take exponential time; a partition path is
 * short, so a pattern that reads its characters more than a few million times in one search is one
 * Hudi's writers, which evaluate it with no limit, would hang on. The bound counts the reads of the
 * text, the only work of the matcher seen from outside it: backtracking that reads nothing (parts that
 * match the empty string in two ways) is refused before, by the rules' syntax check (core/rules.py).
 */
public final class BoundedRegexFind {
  /** What {@link #find} returns when the search read the text more than {@code maxReads} times. */
  public static final int TOO_MANY_STEPS = -1;

  private BoundedRegexFind() {}

  /** 1 if {@code pattern} is found in {@code text}, 0 if not, {@link #TOO_MANY_STEPS} past the bound. */
  public static int find(Pattern pattern, String text, long maxReads) {
    try {
      return pattern.matcher(new CountedReads(text, maxReads)).find() ? 1 : 0;
    } catch (StepLimitReached reached) {
      return TOO_MANY_STEPS;
    }
  }

  /** Thrown out of the matcher to stop it; caught at once, so it records no stack trace. */
  private static final class StepLimitReached extends RuntimeException {
    private static final long serialVersionUID = 1L;

    StepLimitReached() {
      super(null, null, false, false);
    }
  }

  /** The text, counting how often the matcher reads a character of it. */
  private static final class CountedReads implements CharSequence {
    private final String text;
    private final long maxReads;
    private long reads;

    CountedReads(String text, long maxReads) {
      this.text = text;
      this.maxReads = maxReads;
    }

    @Override
    public char charAt(int index) {
      if (++reads > maxReads) {
        throw new StepLimitReached();
      }
      return text.charAt(index);
    }

    @Override
    public int length() {
      return text.length();
    }

    @Override
    public CharSequence subSequence(int start, int end) {
      return text.subSequence(start, end);
    }

    @Override
    public String toString() {
      return text;
    }
  }
}
