/**
 * The fixed texts `get_context` returns beside its matches: what to do next with the entities,
 * and a compact Malloy reference with the errors callers most often make.
 */

/** Instructions for writing a query with the returned entities (`next_steps`). */
export const nextSteps: ReadonlyArray<string> = [
  "Pick the source whose phrases and entities best cover the question (highest overall_score); use its project_name, package_name and model_uri in execute_query.",
  "If a returned view (field_type view) answers the question, run it: execute_query with query_name = the view and source_name = the source; refine it in a custom query with `run: <source> -> <view> + { where: ... }`.",
  "Otherwise write a custom query: group_by the dimensions of group-by phrases, aggregate the measures of the other phrases, and filter with the values listed under the dimensions (use them exactly as listed, with their case).",
  "Write joined fields with their full path as returned (e.g. `products.category`); for time phrases filter or truncate the returned date/timestamp dimension (`where: ordered_at ? @2024`, `group_by: ordered_at.month`).",
  "If an expected entity is missing, call get_context again with fewer scope parameters (remove source_name, then model_uri, then package_name)."
]

/** A concise Malloy syntax reference and common error patterns (`modeling_documentation`). */
export const modelingDocumentation = `Malloy query reference
- Run a query: run: <source> -> { group_by: <dimension>, ...; aggregate: <measure>, ...; where: <condition>; order_by: <field> desc; limit: 10 }
- Counts and ad-hoc aggregates: aggregate: n is count(), avg_price is list_price.avg(), total is sale_price.sum()
- Name an output: group_by: order_month is orders.ordered_at.month
- Joined fields use their path: group_by: products.category; aggregate: users.user_count
- Views: run: <source> -> <view>; refine: run: <source> -> <view> + { where: ...; limit: 5 }
- Named queries: run: <query_name>
- Nested results: nest: by_month is { group_by: m is ordered_at.month; aggregate: total_sales }
- Filter after aggregating: having: total_sales > 1000
- Filtered measure: aggregate: cancelled is count() { where: status = 'Cancelled' }
- Time truncation: <time>.day, .week, .month, .quarter, .year; extraction: month(<time>), year(<time>), hour(<time>)
- Time filters: where: ordered_at ? @2024, ordered_at ? @2024-03, ordered_at ? @2023-11-29 to @2023-12-03, departure_time > @2024-01-01, ordered_at ? now - 12 months for 12 months
- String filters: where: category = 'Footwear'; status ? 'Cancelled' | 'Returned'; city ~ 'San%' (LIKE); state != null
- Booleans and nulls: where: is_cancelled; where: not is_cancelled; where: returned_at is null
- Conditional values: x ? pick 'Low' when < 10 else 'High'
Common errors
- "'x' is not defined": the field name or its join path is wrong; use the names get_context returned, with the path (products.category, not category, from order_items).
- Aggregating a dimension or grouping by a measure: measures go in aggregate, dimensions in group_by.
- A where on a measure: use having (where filters rows before aggregation).
- String literals take single quotes; dates use @ literals, not strings ('2024-01-01' does not compare with a timestamp).
- A view of a joined source cannot be run through the join: run it on its own source.
- order_by may only name fields of the query's output.`
