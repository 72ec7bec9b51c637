package io.beamsave.pipelines.retention;

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
 * {@code last}, the newest of each of the {@code daily} most recent days that have an image, and
 * the newest of each of the {@code weekly} most recent ISO weeks (UTC). The newest image is
 * always kept, whatever the counts, so a prune never leaves a series without its latest backup.
 */
public record Retention(int last, int daily, int weekly) {
  public Retention {
    if (last < 1 || daily < 0 || weekly < 0) {
      throw new IllegalArgumentException(
          "--keep-last must be at least 1, --keep-daily and --keep-weekly at least 0");
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
    for (int i = 0; i < Math.min(last, newestFirst.size()); i++) {
      reasons.get(newestFirst.get(i)).add("last " + (i + 1));
    }
    List<Object> days = new ArrayList<>();
    List<Object> weeks = new ArrayList<>();
    for (StoredImages.Image image : newestFirst) {
      LocalDate day = image.time().atZone(ZoneOffset.UTC).toLocalDate();
      if (days.size() < daily && !days.contains(day)) {
        days.add(day);
        reasons.get(image).add("daily " + day);
      }
      String week = day.get(IsoFields.WEEK_BASED_YEAR) + "-W"
          + String.format("%02d", day.get(IsoFields.WEEK_OF_WEEK_BASED_YEAR));
      if (weeks.size() < weekly && !weeks.contains(week)) {
        weeks.add(week);
        reasons.get(image).add("weekly " + week);
      }
    }
    List<Decision> out = new ArrayList<>();
    reasons.forEach((image, why) -> out.add(new Decision(image, why)));
    return out;
  }
}
