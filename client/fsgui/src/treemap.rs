//! Squarified treemap layout (Bruls, Huizing and van Wijk, 2000): areas
//! proportional to the values, rectangles kept close to square so that
//! small entries stay clickable. Pure geometry, no egui state.

use egui::{Pos2, Rect};

/// Rectangles for `values` (largest first gives the best layout) filling
/// `area`; a value of 0 gets an empty rectangle. Same order as `values`.
pub fn squarify(values: &[u64], area: Rect) -> Vec<Rect> {
    let mut out = vec![Rect::NOTHING; values.len()];
    let total: f64 = values.iter().map(|&v| v as f64).sum();
    if total <= 0.0 || area.width() <= 0.0 || area.height() <= 0.0 {
        return out;
    }
    let scale = f64::from(area.width()) * f64::from(area.height()) / total;
    // Indices of non-zero values, in the given order.
    let items: Vec<usize> = (0..values.len()).filter(|&i| values[i] > 0).collect();
    let mut free = area;
    let mut start = 0;
    while start < items.len() {
        let side = f64::from(free.width().min(free.height()));
        // Grow the row while the worst aspect ratio improves.
        let mut end = start + 1;
        let area_of = |i: usize| values[items[i]] as f64 * scale;
        let mut row_sum = area_of(start);
        let mut worst = worst_ratio(&items[start..end], row_sum, side, &area_of, start);
        while end < items.len() {
            let next_sum = row_sum + area_of(end);
            let next_worst = worst_ratio(&items[start..=end], next_sum, side, &area_of, start);
            if next_worst > worst {
                break;
            }
            row_sum = next_sum;
            worst = next_worst;
            end += 1;
        }
        // Lay the row along the shorter side of the free rectangle.
        let thickness = (row_sum / side) as f32;
        let horizontal = free.width() >= free.height();
        let mut at = 0.0f32;
        for (k, &item) in items[start..end].iter().enumerate() {
            let length = (area_of(start + k) / f64::from(thickness.max(f32::EPSILON))) as f32;
            let r = if horizontal {
                // A column at the left of the free space.
                Rect::from_min_max(
                    Pos2::new(free.min.x, free.min.y + at),
                    Pos2::new(free.min.x + thickness, free.min.y + at + length),
                )
            } else {
                // A row at the top.
                Rect::from_min_max(
                    Pos2::new(free.min.x + at, free.min.y),
                    Pos2::new(free.min.x + at + length, free.min.y + thickness),
                )
            };
            out[item] = r.intersect(area);
            at += length;
        }
        if horizontal {
            free.min.x += thickness;
        } else {
            free.min.y += thickness;
        }
        start = end;
    }
    out
}

/// The worst (largest) aspect ratio of a row of these areas laid along `side`.
fn worst_ratio(
    row: &[usize],
    sum: f64,
    side: f64,
    area_of: &dyn Fn(usize) -> f64,
    first: usize,
) -> f64 {
    let (mut min, mut max) = (f64::MAX, 0.0f64);
    for k in 0..row.len() {
        let a = area_of(first + k);
        min = min.min(a);
        max = max.max(a);
    }
    let (s2, w2) = (sum * sum, side * side);
    (w2 * max / s2).max(s2 / (w2 * min))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(r: &Rect) -> f32 {
        r.width().max(0.0) * r.height().max(0.0)
    }

    #[test]
    fn areas_are_proportional_and_fill_the_rectangle() {
        let values = [6, 6, 4, 3, 2, 2, 1];
        let bounds = Rect::from_min_size(Pos2::ZERO, egui::vec2(600.0, 400.0));
        let rects = squarify(&values, bounds);
        let total: u64 = values.iter().sum();
        let mut sum = 0.0;
        for (v, r) in values.iter().zip(&rects) {
            let want = *v as f32 / total as f32 * area(&bounds);
            assert!((area(r) - want).abs() < 1.0, "{v}: {} vs {want}", area(r));
            assert!(bounds.expand(0.01).contains_rect(*r));
            sum += area(r);
        }
        assert!((sum - area(&bounds)).abs() < 2.0);
        // No two overlap.
        for (i, a) in rects.iter().enumerate() {
            for b in &rects[i + 1..] {
                assert!(area(&a.intersect(*b)) < 0.5);
            }
        }
        // Squarified: the classic example's worst ratio stays small.
        let worst = rects
            .iter()
            .map(|r| (r.width() / r.height()).max(r.height() / r.width()))
            .fold(0.0f32, f32::max);
        assert!(worst < 3.0, "worst aspect ratio {worst}");
    }

    #[test]
    fn zeros_and_empty_input() {
        let bounds = Rect::from_min_size(Pos2::ZERO, egui::vec2(10.0, 10.0));
        assert!(squarify(&[], bounds).is_empty());
        let r = squarify(&[0, 5, 0], bounds);
        assert_eq!(area(&r[0]), 0.0);
        assert!((area(&r[1]) - 100.0).abs() < 0.01);
        assert!(squarify(&[0, 0], bounds).iter().all(|r| area(r) == 0.0));
    }
}
