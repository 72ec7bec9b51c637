package io.beamsave.pipelines.compare;

import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.List;
import javax.imageio.ImageIO;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.AxisLocation;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.labels.ItemLabelAnchor;
import org.jfree.chart.labels.ItemLabelPosition;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleInsets;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.category.CategoryDataset;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * The report's chart: one panel per question (a link speed; for bench also save, restore and
 * size), each with its own scale, since one slow baseline on a shared axis flattens every other
 * bar to a sliver. Bars are horizontal so that long strategy names read across, carry their
 * values, and the panel's winner (the lowest bar) is drawn in another colour and labelled.
 */
final class Chart {
  static final String FONT = "SansSerif";
  static final Color BAR = new Color(0x4a, 0x78, 0xb0);
  static final Color WINNER = new Color(0xd9, 0x6c, 0x00);
  private static final int WIDTH = 1300;

  private Chart() {}

  /** One bar: what it stands for and its value in the panel's unit. */
  record Bar(String label, double value) {}

  /** One panel; {@code winner} is the index of the lowest bar, which wins. */
  record Panel(String title, String unit, List<Bar> bars, int winner) {
    static Panel lowestWins(String title, String unit, List<Bar> bars) {
      int w = 0;
      for (int i = 1; i < bars.size(); i++) {
        if (bars.get(i).value() < bars.get(w).value()) {
          w = i;
        }
      }
      return new Panel(title, unit, List.copyOf(bars), w);
    }

    Bar best() {
      return bars.get(winner);
    }
  }

  /** Draws {@code panels}, {@code columns} to a row, under the title lines, into a PNG. */
  static void write(List<String> titleLines, List<Panel> panels, int columns, Path png)
      throws IOException {
    System.setProperty("java.awt.headless", "true");
    int titleHeight = 40 + 24 * titleLines.size();
    int panelWidth = WIDTH / columns;
    int rows = (panels.size() + columns - 1) / columns;
    int[] rowHeight = new int[rows];
    for (int i = 0; i < panels.size(); i++) {
      rowHeight[i / columns] = Math.max(rowHeight[i / columns], height(panels.get(i)));
    }
    int total = titleHeight;
    for (int h : rowHeight) {
      total += h;
    }
    BufferedImage image = new BufferedImage(WIDTH, total, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      g.setRenderingHint(
          RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, WIDTH, total);
      g.setColor(Color.BLACK);
      int y = 34;
      g.setFont(new Font(FONT, Font.BOLD, 22));
      for (int i = 0; i < titleLines.size(); i++) {
        g.drawString(titleLines.get(i), 16, y);
        g.setFont(new Font(FONT, Font.PLAIN, 16));
        y += i == 0 ? 28 : 22;
      }
      int top = titleHeight;
      for (int r = 0; r < rows; r++) {
        for (int c = 0; c < columns && r * columns + c < panels.size(); c++) {
          chart(panels.get(r * columns + c)).draw(g,
              new Rectangle2D.Double(c * panelWidth, top, panelWidth, rowHeight[r]));
        }
        top += rowHeight[r];
      }
    } finally {
      g.dispose();
    }
    ImageIO.write(image, "png", png.toFile());
  }

  private static int height(Panel p) {
    return 150 + 38 * p.bars().size();
  }

  static JFreeChart chart(Panel p) {
    DefaultCategoryDataset data = new DefaultCategoryDataset();
    for (Bar b : p.bars()) {
      data.addValue(b.value(), p.unit(), b.label());
    }
    CategoryAxis categories = new CategoryAxis();
    categories.setTickLabelFont(new Font(FONT, Font.PLAIN, 15));
    categories.setMaximumCategoryLabelWidthRatio(0.45f);
    categories.setCategoryMargin(0.25);
    NumberAxis values = new NumberAxis(p.unit());
    values.setLabelFont(new Font(FONT, Font.PLAIN, 15));
    values.setTickLabelFont(new Font(FONT, Font.PLAIN, 13));
    // Room on the right of the longest bar for its value and the winner's mark.
    values.setUpperMargin(0.35);
    BarRenderer bars = new WinnerMarked(p.winner(), p.unit());
    bars.setBarPainter(new StandardBarPainter());
    bars.setShadowVisible(false);
    bars.setDrawBarOutline(false);
    bars.setDefaultItemLabelsVisible(true);
    bars.setDefaultItemLabelFont(new Font(FONT, Font.BOLD, 14));
    bars.setDefaultPositiveItemLabelPosition(
        new ItemLabelPosition(ItemLabelAnchor.OUTSIDE3, TextAnchor.CENTER_LEFT));
    bars.setItemLabelAnchorOffset(6);
    CategoryPlot plot = new CategoryPlot(data, categories, values, bars);
    plot.setOrientation(PlotOrientation.HORIZONTAL);
    plot.setRangeAxisLocation(AxisLocation.BOTTOM_OR_LEFT);
    plot.setBackgroundPaint(new Color(0xf6, 0xf6, 0xf6));
    plot.setRangeGridlinePaint(Color.GRAY);
    JFreeChart chart = new JFreeChart(p.title(), new Font(FONT, Font.BOLD, 18), plot, false);
    chart.setBackgroundPaint(Color.WHITE);
    chart.setPadding(new RectangleInsets(18, 12, 12, 12));
    TextTitle best = new TextTitle(String.format(java.util.Locale.ROOT, "★ best: %s, %s %s",
        p.best().label(), number(p.best().value()), p.unit()), new Font(FONT, Font.BOLD, 15));
    best.setPaint(WINNER);
    chart.addSubtitle(best);
    return chart;
  }

  static String number(double v) {
    return new DecimalFormat(Math.abs(v) >= 100 ? "0" : Math.abs(v) >= 10 ? "0.0" : "0.00")
        .format(v);
  }

  /** Bars in one colour, the winner's in another and labelled as such. */
  private static final class WinnerMarked extends BarRenderer {
    private final int winner;

    WinnerMarked(int winner, String unit) {
      this.winner = winner;
      setDefaultItemLabelGenerator(new Labels(winner, unit));
    }

    @Override
    public java.awt.Paint getItemPaint(int row, int column) {
      return column == winner ? WINNER : BAR;
    }
  }

  private static final class Labels extends StandardCategoryItemLabelGenerator {
    private final int winner;
    private final String unit;

    Labels(int winner, String unit) {
      this.winner = winner;
      this.unit = unit;
    }

    @Override
    public String generateLabel(CategoryDataset data, int row, int column) {
      Number v = data.getValue(row, column);
      String text = (v == null ? "-" : number(v.doubleValue())) + " " + unit;
      return column == winner ? text + "  ★ best" : text;
    }
  }
}
