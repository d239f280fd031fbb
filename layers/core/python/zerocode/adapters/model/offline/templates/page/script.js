let clicks = 0;
document.getElementById('action').addEventListener('click', () => {
  clicks += 1;
  document.getElementById('status').textContent =
    COUNT_TEXT;
});
