package io.beamsave.pipelines.retention;

import io.beamsave.pipelines.stored.StoredImages;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.IsoFields;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which images of one series (the saves of one library to one place) to keep: the newest
 * {@code last}, the newest of each of the {@code daily} most recent days that have an image, of
 * the {@code weekly} most recent ISO weeks, the {@code monthly} most recent months and the
 * {@code yearly} most recent years (all in UTC), and every image saved {@code within} the
 * series' newest image's time (not the clock's: a series whose saves stopped keeps what it
 * had). The newest image is always kept, whatever the rules, so a prune never leaves a series
 * without its latest backup.
 */
public record Retention(int last, int daily, int weekly, int monthly, int yearly,
    Period within) {
  public Retention {
    if (last < 0 || daily < 0 || weekly < 0 || monthly < 0 || yearly < 0) {
      throw new IllegalArgumentException("--keep-last, --keep-daily, --keep-weekly,"
          + " --keep-monthly and --keep-yearly take 0 or more");
    }
    if (last + daily + weekly + monthly + yearly == 0 && within == null) {
      throw new IllegalArgumentException(NO_RULE);
    }
  }

  /** What prune says when given no rule. */
  public static final String NO_RULE = "prune needs a rule saying what to keep: --keep-last N"
      + " (the N newest of each series), --keep-daily, --keep-weekly, --keep-monthly or"
      + " --keep-yearly N (the newest of each of the N most recent days, ISO weeks, months or"
      + " years), or --keep-within DURATION (everything saved within 30d, 1y6m, 12h of each"
      + " series' newest image); the newest image of a series is always kept";

  /** Keeps the newest {@code last}, daily and weekly images. */
  public Retention(int last, int daily, int weekly) {
    this(last, daily, weekly, 0, 0, null);
  }

  /**
   * A span of time as {@code --keep-within} takes it: numbers with units, y (years), m
   * (months), w (weeks), d (days), h (hours), as {@code 1y6m}, {@code 30d}, {@code 12h}.
   */
  public record Period(int years, int months, int days, int hours, String text) {
    private static final java.util.regex.Pattern PART =
        java.util.regex.Pattern.compile("(\\d+)([ymwdh])");

    public static Period parse(String text) {
      java.util.regex.Matcher m = PART.matcher(text);
      int at = 0;
      int y = 0;
      int mo = 0;
      int d = 0;
      int h = 0;
      while (m.find() && m.start() == at) {
        // Ten thousand years in any unit is as long as any series lives.
        if (m.group(1).length() > 8) {
          throw new IllegalArgumentException("--keep-within " + text + ": " + m.group(0)
              + " is longer than any series lives; give at most 99999999 of a unit");
        }
        int n = Integer.parseInt(m.group(1));
        switch (m.group(2)) {
          case "y" -> y += n;
          case "m" -> mo += n;
          case "w" -> d += 7 * n;
          case "d" -> d += n;
          default -> h += n;
        }
        at = m.end();
      }
      if (at == 0 || at != text.length()) {
        throw new IllegalArgumentException("--keep-within " + text + ": give a duration as"
            + " numbers with units y, m, w, d, h (30d, 1y6m, 12h)");
      }
      return new Period(y, mo, d, h, text);
    }

    /** The time this long before {@code t}; the start of time for a span longer than Java's. */
    Instant before(Instant t) {
      try {
        return t.atZone(ZoneOffset.UTC).minusYears(years).minusMonths(months).minusDays(days)
            .minusHours(hours).toInstant();
      } catch (java.time.DateTimeException | ArithmeticException beyond) {
        return Instant.MIN;
      }
    }

    @Override
    public String toString() {
      return text;
    }
  }

  /** One decision: the image and why it is kept (empty: it goes). */
  public record Decision(StoredImages.Image image, List<String> reasons) {
    public boolean keep() {
      return !reasons.isEmpty();
    }
  }

  /** Decides for every image of one series, newest first. */
  public List<Decision> decide(List<StoredImages.Image> series) {
    List<StoredImages.Image> newestFirst = new ArrayList<>(series);
    newestFirst.sort(Comparator.comparing(StoredImages.Image::time).reversed());
    Map<StoredImages.Image, List<String>> reasons = new LinkedHashMap<>();
    newestFirst.forEach(i -> reasons.put(i, new ArrayList<>()));
    for (int i = 0; i < Math.min(Math.max(last, 1), newestFirst.size()); i++) {
      reasons.get(newestFirst.get(i)).add(last == 0 ? "newest" : "last " + (i + 1));
    }
    Instant since = within == null || newestFirst.isEmpty() ? null
        : within.before(newestFirst.get(0).time());
    Bucket days = new Bucket("daily", daily);
    Bucket weeks = new Bucket("weekly", weekly);
    Bucket months = new Bucket("monthly", monthly);
    Bucket years = new Bucket("yearly", yearly);
    for (StoredImages.Image image : newestFirst) {
      LocalDate day = image.time().atZone(ZoneOffset.UTC).toLocalDate();
      List<String> why = reasons.get(image);
      days.offer(day.toString(), why);
      weeks.offer(day.get(IsoFields.WEEK_BASED_YEAR) + "-W"
          + String.format("%02d", day.get(IsoFields.WEEK_OF_WEEK_BASED_YEAR)), why);
      months.offer(String.format("%04d-%02d", day.getYear(), day.getMonthValue()), why);
      years.offer(Integer.toString(day.getYear()), why);
      if (since != null && !image.time().isBefore(since)) {
        why.add("within " + within);
      }
    }
    List<Decision> out = new ArrayList<>();
    reasons.forEach((image, why) -> out.add(new Decision(image, why)));
    return out;
  }

  /** The newest image of each of the {@code count} most recent periods of one kind. */
  private static final class Bucket {
    private final String kind;
    private final int count;
    private final List<String> seen = new ArrayList<>();

    Bucket(String kind, int count) {
      this.kind = kind;
      this.count = count;
    }

    /** Called newest first: the first image of each period, while periods remain, is kept. */
    void offer(String period, List<String> why) {
      if (seen.size() < count && !seen.contains(period)) {
        seen.add(period);
        why.add(kind + " " + period);
      }
    }
  }
}
