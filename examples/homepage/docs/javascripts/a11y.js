// Material's search overlay is a role="dialog" without a name (axe: aria-dialog-name); name it,
// again after each instant navigation.
function nameSearchDialog() {
  const search = document.querySelector(".md-search[role='dialog']");
  if (search && !search.hasAttribute("aria-label")) search.setAttribute("aria-label", "Search");
}
if (window.document$ && typeof window.document$.subscribe === "function") {
  window.document$.subscribe(nameSearchDialog);
} else {
  nameSearchDialog();
}
