import { data } from "/_api/client.js";

const form = document.getElementById("sign");
const list = document.getElementById("entries");
const status = document.getElementById("status");

async function show() {
  const { records } = await data.list("entries", { sort: "-createdAt", limit: 50 });
  list.replaceChildren(...records.map((entry) => {
    const item = document.createElement("li");
    item.textContent = entry.message;
    return item;
  }));
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const message = form.message.value.trim();
  if (!message) return;
  try {
    await data.create("entries", { message });
    form.reset();
    status.textContent = "THANKS";
    await show();
  } catch (error) {
    status.textContent = error.message;
  }
});

show().catch((error) => { status.textContent = error.message; });
